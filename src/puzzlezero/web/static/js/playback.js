// Solution playback shared by the cube and board pages: play / pause / step / seek over a move
// list, with the moves shown as chips (the current one highlighted, each one clickable).
import { el } from "./api.js";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class Playback {
  /**
   * @param {object} opts
   * @param {(pos: number, from: number) => Promise<void>|void} opts.show draw the position after
   *   `pos` moves; `from` is the previous position (pos === from + 1 means "animate one move").
   * @param {() => void} [opts.onChange] called after every change (buttons, badges).
   * @param {number} [opts.interval] milliseconds between moves at speed 1.
   */
  constructor({ show, onChange = () => {}, interval = 500 }) {
    this.show = show;
    this.onChange = onChange;
    this.interval = interval;
    this.speed = 1;
    this.moves = [];
    this.pos = 0;
    this.playing = false;
    this.token = 0; // bumps to cancel a running play loop
    this.list = document.getElementById("solution");
    this.bindButtons();
  }

  get loaded() { return this.moves.length > 0; }
  get atEnd() { return this.pos >= this.moves.length; }

  bindButtons() {
    const on = (id, fn) => document.getElementById(id).addEventListener("click", fn);
    on("play", () => this.toggle());
    on("step-back", () => { this.pause(); this.seek(this.pos - 1); });
    on("step-forward", () => { this.pause(); this.step(); });
    on("to-start", () => { this.pause(); this.seek(0); });
    on("to-end", () => { this.pause(); this.seek(this.moves.length); });
    const speed = document.getElementById("speed");
    speed.addEventListener("input", () => { this.speed = Number(speed.value) || 1; });
    this.speed = Number(speed.value) || 1;
  }

  /**
   * Load a solution (position 0 = the state it solves). `stages` (layered solving: [{goal,
   * solution}, ...] whose solutions concatenate to `moves`) puts each goal's name before its moves.
   */
  load(moves, stages = null) {
    this.pause();
    this.moves = moves.slice();
    this.stages = stages && stages.every((st) => Array.isArray(st.solution)) ? stages : null;
    this.pos = 0;
    this.renderList();
    this.changed();
  }

  clear() { this.load([]); }

  async step() {
    if (this.atEnd) return;
    const from = this.pos;
    this.pos += 1;
    this.changed();
    await this.show(this.pos, from);
  }

  async seek(pos) {
    const target = Math.max(0, Math.min(this.moves.length, pos));
    if (target === this.pos) return;
    if (target === this.pos + 1) { await this.step(); return; }
    const from = this.pos;
    this.pos = target;
    this.changed();
    await this.show(this.pos, from);
  }

  async play() {
    if (!this.loaded || this.playing) return;
    if (this.atEnd) await this.seek(0);
    this.playing = true;
    const token = ++this.token;
    this.changed();
    while (this.playing && token === this.token && !this.atEnd) {
      await this.step();
      await sleep(this.interval / this.speed);
    }
    if (token === this.token) {
      this.playing = false;
      this.changed();
    }
  }

  pause() {
    if (!this.playing) return;
    this.playing = false;
    this.token += 1;
    this.changed();
  }

  toggle() { if (this.playing) this.pause(); else this.play(); }

  changed() {
    const play = document.getElementById("play");
    play.querySelector(".label").textContent = this.playing ? "Pause" : "Play";
    play.setAttribute("aria-pressed", String(this.playing));
    for (const id of ["play", "step-back", "step-forward", "to-start", "to-end"]) {
      document.getElementById(id).disabled = !this.loaded;
    }
    document.getElementById("position").textContent = this.loaded ? `${this.pos} / ${this.moves.length}` : "";
    this.list.querySelectorAll(".chip").forEach((chip, i) => {
      chip.classList.toggle("done", i < this.pos);
      chip.classList.toggle("current", i === this.pos - 1);
    });
    this.onChange();
  }

  renderList() {
    const chips = this.moves.map((move, i) =>
      el("button", { class: "chip", type: "button", title: `go to move ${i + 1}`,
        onclick: () => { this.pause(); this.seek(i + 1); } }, move));
    if (!this.stages) { this.list.replaceChildren(...chips); return; }
    // layered solving: each stage's goal, then its moves (a stage already met shows its goal only)
    const items = [];
    let next = 0;
    for (const st of this.stages) {
      items.push(el("span", { class: "stage", title: `moves to reach ${st.goal}` }, `${st.goal}:`));
      items.push(...chips.slice(next, next + st.solution.length));
      next += st.solution.length;
    }
    items.push(...chips.slice(next));
    this.list.replaceChildren(...items);
  }
}
