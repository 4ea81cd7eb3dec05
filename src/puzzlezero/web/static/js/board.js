// Board page: sliding puzzles, Lights Out, Sokoban and any other puzzle (a plugin's). Boards are
// the puzzles' own SVG drawings (puzzle.to_svg on the server); a click is mapped to a cell from the
// centre of the clicked shape in the SVG's own coordinates, so the mapping does not depend on
// margins or on the page's scale. Any puzzle's drawing may name a move on a shape (data-move="F3"):
// a click on it plays that move; other puzzles also get one button per move under the board.
// The page's URL carries the puzzle, the state and a loaded solution
// (`/board?puzzle=puzzle15&state=...&solution=...`), so a link opens them.
import { api, busy, el, fillMethods, fillPuzzleSelect, listFound, setSolved, showProgress, setStatus, showStats, solveBody, solveQueued, waitText } from "./api.js";
import { Playback } from "./playback.js";

const HOW_TO = {
  sliding: "Click a tile in the blank's row or column to slide it; the arrow keys slide a tile in the arrow's direction.",
  lightsout: "Click a light to press it: it and its four neighbours toggle. Goal: every light off.",
  sokoban: "Arrow keys (or a click next to the player) walk; walking into a box pushes it. Goal: every box on a target.",
  other: "Click a move under the board (or a part of the drawing that names one) to play it; scramble, solve and play the solution.",
};
const ARROWS = { ArrowUp: "U", ArrowDown: "D", ArrowLeft: "L", ArrowRight: "R" };

const S = {
  info: null,      // /api/puzzles entry of the current puzzle
  frame: null,     // current {state, view, solved, svg}
  start: null,     // state text of the last loaded / scrambled state (Sokoban "restart")
  frames: null,    // trajectory of the loaded solution
  chain: Promise.resolve(), // moves are sent one after another, in order
  solving: false,  // a solve of this page is running
  epoch: 0,        // bumps when the state changes; a solve started before is not shown
};
const board = document.getElementById("board");
const pb = new Playback({ show: (pos) => showFrame(S.frames[pos]), interval: 400 });

function showFrame(frame) {
  S.frame = frame;
  board.innerHTML = frame.svg; // our own server's SVG
  setSolved(frame.solved);
}

/** The page's URL: the puzzle, the state a loaded solution starts from (else the current one), the solution. */
function writeLink() {
  const params = new URLSearchParams({ puzzle: S.info.name });
  const state = pb.loaded ? S.frames[0].state : S.frame?.state;
  if (state) params.set("state", state);
  if (pb.loaded) params.set("solution", pb.moves.join(" "));
  history.replaceState(null, "", `/board?${params}`);
}

/** Load `moves` (solving `state`, the current one) into the playback, one frame a move. */
async function showSolution(state, moves, stages = null) {
  const traj = await api("/api/move", { puzzle: S.info.name, state, moves, trajectory: true, svg: true });
  if (!traj.frames[traj.frames.length - 1].solved) throw new Error(`${moves.join(" ")} does not solve this state`);
  S.frames = traj.frames;
  pb.load(moves, stages);
  showFrame(S.frames[0]);
  writeLink();
}

function dropSolution() {
  S.epoch += 1;
  listFound(null);
  if (!pb.loaded) return;
  S.frames = null;
  pb.clear();
  showStats(null);
}

/** Load a state text (null = the goal) as the new current state. */
async function loadState(text) {
  const data = await api("/api/move", { puzzle: S.info.name, state: text, moves: [], svg: true });
  dropSolution();
  S.start = data.state;
  showFrame(data);
  writeLink();
}

function play(moves) {
  if (!moves.length) return;
  S.chain = S.chain.then(async () => {
    dropSolution();
    const data = await api("/api/move", { puzzle: S.info.name, state: S.frame.state, moves, svg: true });
    showFrame(data);
    writeLink();
  }).catch((err) => setStatus(err.message, "error"));
}

// ---- clicks -> moves ------------------------------------------------------------------------
function gridSize(view) {
  if (view.grid) return [view.grid.length, view.grid[0].length];
  return [view.size, view.size];
}

/** Row and column of a click: the clicked shape's index or the centre of its box, else (floor
 * drawn as the background) the click point itself, all in the SVG's own user units. */
function clickedCell(event) {
  const svg = board.querySelector("svg");
  if (!svg) return null;
  const [rows, cols] = gridSize(S.frame.view);
  const vb = svg.viewBox.baseVal;
  const shape = event.target.closest("rect, text, circle, ellipse, path, polygon");
  if (shape && shape.dataset.index !== undefined) {
    const i = Number(shape.dataset.index);
    return [Math.floor(i / cols), i % cols];
  }
  let x;
  let y;
  const box = shape ? shape.getBBox() : null;
  if (box && box.width < vb.width * 0.9) {
    [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
  } else {
    const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM().inverse());
    [x, y] = [point.x, point.y];
  }
  const row = Math.floor(((y - vb.y) / vb.height) * rows);
  const col = Math.floor(((x - vb.x) / vb.width) * cols);
  return row >= 0 && row < rows && col >= 0 && col < cols ? [row, col] : null;
}

function movesForClick(row, col) {
  const view = S.frame.view;
  const kind = S.info.kind;
  if (kind === "lightsout") return [S.info.action_names[row * view.size + col]];
  if (kind === "sliding") {
    const blank = view.tiles.indexOf(0);
    const [br, bc] = [Math.floor(blank / view.size), blank % view.size];
    if (row === br && col !== bc) return Array(Math.abs(col - bc)).fill(col > bc ? "L" : "R");
    if (col === bc && row !== br) return Array(Math.abs(row - br)).fill(row > br ? "U" : "D");
    return [];
  }
  if (kind === "sokoban" && view.agent) {
    const [ar, ac] = view.agent;
    if (Math.abs(row - ar) + Math.abs(col - ac) !== 1) return [];
    return [row < ar ? "U" : row > ar ? "D" : col < ac ? "L" : "R"];
  }
  return [];
}

board.addEventListener("click", (event) => {
  if (!S.frame) return;
  const named = event.target.closest("[data-move]"); // the drawing names the move itself
  if (named) { play([named.dataset.move]); return; }
  const cell = clickedCell(event);
  if (cell) play(movesForClick(...cell));
});

document.addEventListener("keydown", (event) => {
  if (event.target.closest("input, textarea, select") || event.ctrlKey || event.metaKey || event.altKey) return;
  if (ARROWS[event.key] && (S.info.kind === "sliding" || S.info.kind === "sokoban")) {
    event.preventDefault();
    play([ARROWS[event.key]]);
  } else if (event.code === "Space") {
    event.preventDefault();
    pb.toggle();
  }
});

// ---- buttons --------------------------------------------------------------------------------
async function scramble() {
  const depth = Number(document.getElementById("depth").value) || S.info.default_scramble_depth;
  const data = await api(`/api/scramble?puzzle=${S.info.name}&depth=${depth}&svg=true`);
  dropSolution();
  S.start = data.state;
  showFrame(data);
  writeLink();
  setStatus(data.moves ? `scrambled with ${data.moves.length} random moves (seed ${data.seed})`
    : `generated a level (seed ${data.seed})`, "ok");
}

/** Solve the current state (the page's Solve button); `S.solving` while it runs. */
async function solve() {
  S.solving = true;
  try {
    await solveCurrent();
  } finally {
    S.solving = false;
  }
}

async function solveCurrent() {
  await S.chain;
  if (pb.loaded) dropSolution();
  if (S.frame.solved) { setStatus("already solved", "ok"); return; }
  setStatus("solving…");
  const state = S.frame.state;
  const epoch = ++S.epoch;
  const current = () => S.epoch === epoch;
  const untouched = () => !pb.loaded || (pb.pos === 0 && !pb.playing); // nothing of a solution played yet
  const load = async (found) => { if (current()) await showSolution(state, found.notation); };
  // the first solution as soon as the solver has it, then each shorter one (unless one is being played)
  const onImprovement = async (found) => {
    if (!current()) return;
    listFound(found, load);
    showProgress(found);
    if (untouched()) await showSolution(state, found.notation).catch((err) => setStatus(err.message, "error"));
  };
  const res = await solveQueued(solveBody(S.info.name, state), (job) => { if (current()) setStatus(waitText(job)); }, onImprovement);
  if (!current()) { setStatus("the board changed while solving: solve again", "error"); return; }
  showStats(res);
  if (!res.solved) {
    setStatus(`no solution within the limits (${res.nodes_generated.toLocaleString("en-US")} nodes)`, "error");
    return;
  }
  const moves = res.notation ?? res.solution;
  if (untouched() || pb.moves.join(" ") === moves.join(" ")) {
    await showSolution(state, moves, res.stages);
    setStatus(`found a ${res.length}-move solution: press Play`, "ok");
  } else {
    setStatus(`found a ${res.length}-move solution; the one being played stays (pick another in the list)`, "ok");
  }
}

async function selectPuzzle(name, puzzles, server, link = null) {
  S.info = puzzles.find((p) => p.name === name) ?? puzzles[0];
  fillMethods(server, S.info);
  history.replaceState(null, "", `/board?puzzle=${S.info.name}`);
  document.getElementById("how-to").textContent = HOW_TO[S.info.kind] ?? HOW_TO.other;
  document.getElementById("reset").textContent = S.info.reversible ? "Reset" : "Restart";
  const moves = document.getElementById("moves"); // a button per move where clicks on cells mean nothing
  moves.hidden = S.info.kind !== "other";
  moves.replaceChildren(...(moves.hidden ? [] : S.info.action_names.map((name) =>
    el("button", { class: "chip", type: "button", title: `play ${name}`, onclick: () => play([name]) }, name))));
  const depth = { sliding: 40, lightsout: 10, sokoban: 40 }[S.info.kind] ?? 20;
  document.getElementById("depth").value = Math.min(depth, S.info.default_scramble_depth);
  if (link?.get("state")) {
    await openLink(link);
    return;
  }
  if (S.info.reversible) await loadState(null);
  else await scramble();
  const method = document.getElementById("method").selectedOptions[0]?.textContent ?? "";
  setStatus(S.info.model ? "ready" : `ready (no trained model is shipped for ${S.info.name} yet; method: ${method})`, "ok");
}

/** Open what a link names: its `state`, and its `solution` when that solves the state. */
async function openLink(link) {
  try {
    await loadState(link.get("state"));
  } catch (err) {
    if (S.info.reversible) await loadState(null);
    else await scramble();
    throw new Error(`the link's state was not loaded: ${err.message}`);
  }
  const solution = (link.get("solution") ?? "").trim().split(/\s+/).filter(Boolean);
  if (!solution.length) { setStatus("opened the link's state", "ok"); return; }
  try {
    await showSolution(S.frame.state, solution);
  } catch (err) {
    throw new Error(`the link's solution was not loaded: ${err.message}`);
  }
  setStatus(`opened the link's state and its ${solution.length}-move solution: press Play`, "ok");
}

async function init() {
  const [server, all] = await Promise.all([api("/api/info"), api("/api/puzzles")]);
  const puzzles = all.filter((p) => p.kind !== "cube");
  const link = new URLSearchParams(location.search);
  const wanted = link.get("puzzle") ?? "puzzle15";
  const select = document.getElementById("puzzle");
  const first = puzzles.find((p) => p.name === wanted) ? wanted : puzzles[0].name;
  fillPuzzleSelect(select, puzzles, first);
  select.addEventListener("change", () => busy(select, () => selectPuzzle(select.value, puzzles, server)));
  const on = (id, fn) => { const b = document.getElementById(id); b.addEventListener("click", () => busy(b, fn)); };
  on("scramble", scramble);
  on("reset", () => (S.info.reversible ? loadState(null) : loadState(S.start)));
  on("load", () => loadState(document.getElementById("input").value));
  on("solve", solve);
  await selectPuzzle(first, puzzles, server, first === wanted ? link : null);
}

window.pz = {
  ready: init().catch((err) => setStatus(err.message, "error")),
  snapshot: () => ({
    puzzle: S.info?.name, state: S.frame?.state, solved: S.frame?.solved,
    solution: pb.moves.slice(), pos: pb.pos, playing: pb.playing, solving: S.solving,
  }),
};
