// The hint view: what the network thinks of each next move. For the current state it asks
// POST /api/value (one network call on a worker) and lists every move with the estimated distance
// to solved after it, shortest first, as a bar; the move the network prefers is marked. A click on
// a move plays it. Only one request is in flight at a time: a state that changes meanwhile is
// asked for when the answer comes.
import { api, el } from "./api.js";

export class Hints {
  /**
   * @param {object} opts
   * @param {(move: string) => void} opts.play plays a move (a click on a hint)
   */
  constructor({ play }) {
    this.play = play;
    this.box = document.getElementById("hints");
    this.list = document.getElementById("hint-list");
    this.summary = document.getElementById("hint-summary");
    this.toggle = document.getElementById("show-hints");
    this.wanted = null;   // {puzzle, state} the view should show
    this.shown = null;    // the state text it shows
    this.inFlight = false;
    this.toggle.addEventListener("change", () => {
      this.list.hidden = !this.toggle.checked;
      if (this.toggle.checked) this.refresh();
      else this.summary.textContent = "";
    });
  }

  get on() { return this.toggle.checked; }

  /** The state changed: ask for its values (when the view is on). */
  show(puzzle, state) {
    this.wanted = { puzzle, state };
    if (this.on) this.refresh();
  }

  async refresh() {
    if (this.inFlight || !this.wanted || !this.on) return;
    const { puzzle, state } = this.wanted;
    if (this.shown === `${puzzle}:${state}`) return;
    this.inFlight = true;
    this.box.dataset.state = "loading";
    this.summary.textContent = "asking the network…";
    try {
      const v = await api("/api/value", { puzzle, state });
      this.render(v);
      this.shown = `${puzzle}:${state}`;
      this.box.dataset.state = "ready";
    } catch (err) {
      this.summary.textContent = `no hints: ${err.message}`;
      this.list.replaceChildren();
      this.shown = null;
      this.box.dataset.state = "error";
    } finally {
      this.inFlight = false;
    }
    if (this.wanted && this.shown !== `${this.wanted.puzzle}:${this.wanted.state}` && this.box.dataset.state !== "error") {
      this.refresh();
    }
  }

  render(v) {
    if (v.is_goal) {
      this.summary.textContent = "solved: nothing left to do";
      this.list.replaceChildren();
      return;
    }
    const after = v.after_move;
    const moves = Object.keys(after).sort((a, b) => after[a] - after[b]);
    const worst = Math.max(...moves.map((m) => after[m]), 1);
    this.summary.textContent = `the network thinks this cube is about ${v.value.toFixed(1)} moves from solved; after each move:`;
    this.list.replaceChildren(...moves.map((m) => el("li", {
      class: m === v.best_move ? "hint-row best" : "hint-row",
      dataset: { move: m, after: String(after[m]) },
      title: `after ${m}: about ${after[m].toFixed(1)} moves to go (click to play ${m})`,
      onclick: () => this.play(m),
    },
    el("span", { class: "hint-move" }, m),
    el("span", { class: "hint-bar" }, el("span", { style: `width:${(100 * after[m]) / worst}%` })),
    el("span", { class: "hint-value" }, after[m].toFixed(1)))));
  }
}
