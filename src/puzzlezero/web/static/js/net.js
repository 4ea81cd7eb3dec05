// Entering a real cube by its colours: the unfolded net of the stickers (U on top, L F R B across,
// D below, as the server's state text reads them), a palette of the six colours, and the centres
// fixed (they name the faces). Every change is checked by the server's state parser
// (POST /api/validate), whose message (a twisted corner, a flipped edge, a parity, wrong colour
// counts) is shown next to the net.
import { api, el } from "./api.js";

/** The faces in the order of the state text (Kociemba's facelet order U R F D L B). */
export const FACE_ORDER = ["U", "R", "F", "D", "L", "B"];
/** Each face's colour, as the server's drawings and cubing.js show them. */
export const COLOURS = {
  U: { name: "white", hex: "#ffffff" },
  R: { name: "red", hex: "#c41e3a" },
  F: { name: "green", hex: "#009e60" },
  D: { name: "yellow", hex: "#ffd500" },
  L: { name: "orange", hex: "#ff5800" },
  B: { name: "blue", hex: "#0051ba" },
};
/** Where each face lies in the net, in face-sized blocks (row, column). */
const NET_BLOCK = { U: [0, 1], L: [1, 0], F: [1, 1], R: [1, 2], B: [1, 3], D: [2, 1] };

export class StickerNet {
  /**
   * @param {object} opts
   * @param {string} opts.puzzle the puzzle's name (cube3, cube2, ...)
   * @param {(check: {valid: boolean, message: string, state?: string}) => void} [opts.onCheck]
   *   called with the server's verdict after every change.
   */
  constructor({ puzzle, onCheck = () => {} }) {
    this.root = document.getElementById("net");
    this.palette = document.getElementById("palette");
    this.message = document.getElementById("net-message");
    this.onCheck = onCheck;
    this.colour = "U";
    this.seq = 0; // verdicts overtaken by a newer change are dropped
    this.last = null;
    this.buildPalette();
    this.setPuzzle(puzzle, null);
  }

  /** The net of `puzzle`, showing `facelets` (null: solved). */
  setPuzzle(puzzle, facelets) {
    this.puzzle = puzzle;
    this.facelets = facelets ?? "";
    this.n = facelets ? Math.round(Math.sqrt(facelets.length / 6)) : (puzzle === "cube2" ? 2 : 3);
    if (!facelets) this.facelets = FACE_ORDER.map((f) => f.repeat(this.n * this.n)).join("");
    this.build();
  }

  /** Show `facelets` (the server's state text) in the net and check it. */
  set(facelets) {
    this.setPuzzle(this.puzzle, facelets);
    return this.check();
  }

  get perFace() { return this.n * this.n; }

  /** A centre names its face and cannot be recoloured (odd cubes only). */
  isCentre(index) { return this.n % 2 === 1 && index % this.perFace === (this.perFace - 1) / 2; }

  buildPalette() {
    this.palette.replaceChildren(...FACE_ORDER.map((f) => el("button", {
      type: "button", class: "swatch", dataset: { colour: f }, style: `background:${COLOURS[f].hex}`,
      title: `${COLOURS[f].name} (the ${f} face's colour)`, "aria-label": COLOURS[f].name,
      "aria-pressed": String(f === this.colour), onclick: () => this.pick(f),
    })));
  }

  /** Choose the colour that the next clicked sticker gets. */
  pick(face) {
    this.colour = face;
    this.palette.querySelectorAll(".swatch").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.colour === face)));
  }

  build() {
    const n = this.n;
    this.root.style.setProperty("--n", n);
    const stickers = [];
    FACE_ORDER.forEach((face, f) => {
      const [br, bc] = NET_BLOCK[face];
      for (let i = 0; i < this.perFace; i += 1) {
        const index = f * this.perFace + i;
        const centre = this.isCentre(index);
        stickers.push(el("button", {
          type: "button", class: centre ? "sticker centre" : "sticker",
          dataset: { index: String(index), face, colour: this.facelets[index] },
          style: `grid-row:${br * n + Math.floor(i / n) + 1};grid-column:${bc * n + (i % n) + 1}`,
          title: centre ? `the ${face} centre names its face` : `${face}${i + 1}`,
          disabled: centre, onclick: () => this.paint(index),
        }, centre ? face : ""));
      }
    });
    this.root.replaceChildren(...stickers);
    this.paintAll();
  }

  paintAll() {
    this.root.querySelectorAll(".sticker").forEach((b) => {
      const c = this.facelets[Number(b.dataset.index)];
      b.dataset.colour = c;
      b.style.background = COLOURS[c]?.hex ?? "#808080";
      b.setAttribute("aria-label", `${b.title}: ${COLOURS[c]?.name ?? c}`);
    });
  }

  /** Give sticker `index` the chosen colour, then check the cube. */
  paint(index) {
    if (this.isCentre(index)) return;
    this.facelets = this.facelets.slice(0, index) + this.colour + this.facelets.slice(index + 1);
    this.paintAll();
    this.check();
  }

  /** Ask the server whether the net is a cube one can reach by turning; shows its message. */
  async check() {
    const seq = ++this.seq;
    let verdict;
    try {
      verdict = await api("/api/validate", { puzzle: this.puzzle, state: this.facelets });
    } catch (err) {
      verdict = { valid: false, message: err.message };
    }
    if (seq !== this.seq) return this.last;
    this.last = verdict;
    this.message.textContent = verdict.valid ? "a cube one can reach by turning: ready to solve" : verdict.message;
    this.message.dataset.kind = verdict.valid ? "ok" : "error";
    this.onCheck(verdict);
    return verdict;
  }
}
