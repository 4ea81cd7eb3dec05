// Board page: sliding puzzles, Lights Out, Sokoban, permutation puzzles defined as data and any
// other puzzle (a plugin's). Boards are the puzzles' own SVG drawings (puzzle.to_svg on the server);
// a click is mapped to a cell from the centre of the clicked shape in the SVG's own coordinates, so
// the mapping does not depend on margins or on the page's scale. Any puzzle's drawing may name a
// move on a shape (data-move="F3"): a click on it plays that move; permutation and other puzzles
// also get one button per move under the board, each beside its inverse, grouped by the letters the
// names start with (f0 f1 ... / r0 r1 ...) when there are many.
// A cube that cubing.js has (the server's `cubing` entry: its puzzle and each move's cubing.js
// move) is also shown in 3-D. cubing.js draws move sequences, so the page keeps the moves from the
// goal to the current state (`S.base`); a state pasted as labels has none, and only its net shows.
// The page's URL carries the puzzle, the state and a loaded solution
// (`/board?puzzle=puzzle15&state=...&solution=...`), so a link opens them.
import { api, busy, el, fillMethods, fillPuzzleSelect, listFound, setSolved, showProgress, setStatus, showStats, solveBody, solveQueued, waitText } from "./api.js";
import { Playback } from "./playback.js";

const HOW_TO = {
  sliding: "Click a tile in the blank's row or column to slide it; the arrow keys slide a tile in the arrow's direction.",
  lightsout: "Click a light to press it: it and its four neighbours toggle. Goal: every light off.",
  sokoban: "Arrow keys (or a click next to the player) walk; walking into a box pushes it. Goal: every box on a target.",
  permutation: "Click a move under the board to play it (each move beside its inverse); scramble, solve and play the solution.",
  other: "Click a move under the board (or a part of the drawing that names one) to play it; scramble, solve and play the solution.",
};
/** Puzzles that get a button per move. */
const MOVE_BUTTONS = new Set(["permutation", "other"]);
/** More moves than this are grouped by the letters their names start with. */
const FLAT_MOVES = 12;
const ARROWS = { ArrowUp: "U", ArrowDown: "D", ArrowLeft: "L", ArrowRight: "R" };

const S = {
  info: null,      // /api/puzzles entry of the current puzzle
  frame: null,     // current {state, view, solved, svg}
  start: null,     // state text of the last loaded / scrambled state (Sokoban "restart")
  frames: null,    // trajectory of the loaded solution
  chain: Promise.resolve(), // moves are sent one after another, in order
  solving: false,  // a solve of this page is running
  epoch: 0,        // bumps when the state changes; a solve started before is not shown
  base: [],        // moves from the goal to the state a loaded solution starts from (else the current one); null: not known
  server: null,    // /api/info
  player: null,    // <twisty-player> of the current puzzle's 3-D view, when it has one
  twisty: undefined, // the page's one <twisty-player>, made when first needed (null: cubing.js unavailable)
};
const board = document.getElementById("board");
const stage3d = document.getElementById("board-3d");
const pb = new Playback({ show: (pos, from) => { showFrame(S.frames[pos]); show3d(pos, from); }, interval: 400 });

/** Moves from the goal to the current state (a loaded solution's played part included); null: not known. */
const currentAlg = () => (S.base === null ? null : S.base.concat(pb.moves.slice(0, pb.pos)));
/** Our moves as cubing.js writes them. */
const cubingAlg = (moves) => moves.map((m) => S.info.cubing.moves[m]).join(" ");

// ---- 3-D (cubing.js) ------------------------------------------------------------------------
/** Load cubing.js's player once; null when it cannot be loaded (the reason goes to the notice). */
async function twistyPlayer() {
  if (S.twisty !== undefined) return S.twisty;
  S.twisty = null;
  if (!S.server.cubing) return null;
  try {
    await import("cubing/twisty");
  } catch (err) {
    notice(`3-D view unavailable: cubing.js failed to load (${err.message}); the net shows the cube`);
    return null;
  }
  const player = document.createElement("twisty-player");
  player.controlPanel = "none";
  player.background = "none";
  player.hintFacelets = "none";
  player.backView = "none";
  player.tempoScale = 3;
  stage3d.append(player);
  S.twisty = player;
  return player;
}

function notice(text) {
  const node = document.getElementById("notice");
  node.textContent = text ?? "";
  node.hidden = !text;
}

/** Show the current puzzle in 3-D where cubing.js has it, else hide the 3-D view. */
async function setUp3d() {
  const cubing = S.info.cubing;
  const player = cubing ? await twistyPlayer() : null;
  S.player = player;
  if (player) player.puzzle = cubing.puzzle;
  if (cubing && !S.server.cubing) notice("3-D view unavailable: cubing.js is not installed on the server (run `npm ci`); the net shows the cube");
  else if (!cubing) notice(null);
  redraw3d();
}

/** Draw the 3-D view from the moves: the setup is the state a loaded solution starts from. */
function redraw3d() {
  stage3d.hidden = !S.player || S.base === null;
  board.classList.toggle("with-3d", !stage3d.hidden);
  if (!S.player) return;
  if (S.base === null) {
    notice("the 3-D view shows states reached by moves from the goal; this one was given as labels, so only its net shows");
    return;
  }
  notice(null);
  S.player.experimentalSetupAlg = cubingAlg(S.base);
  S.player.alg = cubingAlg(pb.moves.slice(0, pb.pos));
  S.player.timestamp = "end";
}

function show3d(pos, from) {
  if (!S.player || S.base === null) return;
  if (pos === from + 1) S.player.experimentalAddMove(S.info.cubing.moves[pb.moves[from]]);
  else redraw3d();
}

/** Moves from the goal that reach `state` when the text `text` names them (f0 r1' d0, or the
 * competition's f0.-r1), else null; the server's answer for them is compared with the state. */
async function movesFromGoal(text, state) {
  const names = S.info.action_names;
  const tokens = (text ?? "").trim().split(/[\s.]+/).filter(Boolean);
  const moves = [];
  for (const t of tokens) {
    if (names.includes(t)) moves.push(t);
    else if (t.startsWith("-") && names.includes(t.slice(1))) {
      const inverse = S.info.inverses[names.indexOf(t.slice(1))];
      if (inverse < 0) return null;
      moves.push(names[inverse]);
    } else return null;
  }
  const reached = await api("/api/move", { puzzle: S.info.name, moves });
  return reached.state === state ? moves : null;
}

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
  redraw3d();
  writeLink();
}

function dropSolution() {
  S.epoch += 1;
  listFound(null);
  if (!pb.loaded) return;
  S.base = currentAlg(); // what was played of the solution is part of the state now
  S.frames = null;
  pb.clear();
  showStats(null);
}

/** Load a state text (null = the goal) as the new current state. */
async function loadState(text) {
  const data = await api("/api/move", { puzzle: S.info.name, state: text, moves: [], svg: true });
  const base = text === null ? [] : S.info.cubing ? await movesFromGoal(text, data.state) : null;
  dropSolution();
  S.base = base;
  S.start = data.state;
  showFrame(data);
  redraw3d();
  writeLink();
}

function play(moves) {
  if (!moves.length) return;
  S.chain = S.chain.then(async () => {
    dropSolution();
    const data = await api("/api/move", { puzzle: S.info.name, state: S.frame.state, moves, svg: true });
    showFrame(data);
    if (S.base !== null) {
      S.base.push(...moves);
      if (S.player && moves.length === 1) S.player.experimentalAddMove(S.info.cubing.moves[moves[0]]);
      else redraw3d();
    }
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
  S.base = data.moves ? data.moves.slice() : null;
  S.start = data.state;
  showFrame(data);
  redraw3d();
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

/** The moves in pairs, each with its inverse beside it (a move that is its own inverse alone),
 * grouped by the letters their names start with: Map("f" -> [["f0", "f0'"], ...], ...). */
function moveGroups(info) {
  const names = info.action_names;
  const taken = new Set();
  const groups = new Map();
  names.forEach((name, i) => {
    if (taken.has(i)) return;
    taken.add(i);
    const j = info.inverses?.[i] ?? -1;
    const pair = j >= 0 && j !== i && !taken.has(j) ? [name, names[j]] : [name];
    if (pair.length === 2) taken.add(j);
    const key = (name.match(/^[A-Za-z]+/) ?? [""])[0];
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(pair);
  });
  return groups;
}

/** A button per move where clicks on cells mean nothing: each beside its inverse, and many moves
 * grouped in rows by the letters their names start with. */
function buildMoveButtons() {
  const box = document.getElementById("moves");
  box.hidden = !MOVE_BUTTONS.has(S.info.kind);
  if (box.hidden) { box.replaceChildren(); return; }
  const button = (name) => el("button", { class: "chip", type: "button", title: `play ${name}`,
    dataset: { move: name }, onclick: () => play([name]) }, name);
  const pair = (names) => el("span", { class: "move-pair" }, names.map(button));
  const groups = moveGroups(S.info);
  const grouped = S.info.action_names.length > FLAT_MOVES && groups.size > 1;
  box.classList.toggle("grouped", grouped);
  if (!grouped) {
    box.replaceChildren(...[...groups.values()].flat().map(pair));
    return;
  }
  box.replaceChildren(...[...groups].map(([key, pairs]) => el("div", { class: "move-group", dataset: { group: key } },
    el("span", { class: "move-group-name" }, key || "·"), pairs.map(pair))));
}

async function selectPuzzle(name, puzzles, server, link = null) {
  S.info = puzzles.find((p) => p.name === name) ?? puzzles[0];
  fillMethods(server, S.info);
  history.replaceState(null, "", `/board?puzzle=${S.info.name}`);
  document.getElementById("how-to").textContent = HOW_TO[S.info.kind] ?? HOW_TO.other;
  document.getElementById("reset").textContent = S.info.reversible ? "Reset" : "Restart";
  buildMoveButtons();
  // puzzles solved without a model (a misplaced-count heuristic) get scrambles they can answer
  const depth = { sliding: 40, lightsout: 10, sokoban: 40 }[S.info.kind] ?? (S.info.model ? 20 : 6);
  document.getElementById("depth").value = Math.min(depth, S.info.default_scramble_depth);
  S.base = [];
  pb.clear();
  S.frames = null;
  await setUp3d();
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
  S.server = server;
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
  on("load", async () => { await loadState(document.getElementById("input").value); setStatus("loaded the state", "ok"); });
  on("solve", solve);
  await selectPuzzle(first, puzzles, server, first === wanted ? link : null);
}

window.pz = {
  ready: init().catch((err) => setStatus(err.message, "error")),
  snapshot: () => ({
    puzzle: S.info?.name, state: S.frame?.state, solved: S.frame?.solved,
    solution: pb.moves.slice(), pos: pb.pos, playing: pb.playing, solving: S.solving,
    alg: currentAlg()?.join(" ") ?? null, mode: S.player && !stage3d.hidden ? "3d" : "2d",
  }),
  /** What the 3-D view shows, as cubing.js holds it: its puzzle, the setup moves and the moves
   * played after them (null without a 3-D view). */
  async cubing() {
    if (!S.player || stage3d.hidden) return null;
    const model = S.player.experimentalModel;
    return {
      puzzle: await model.puzzleID.get(),
      setup: (await model.setupAlg.get()).alg.toString(),
      alg: (await model.alg.get()).alg.toString(),
    };
  },
  /** cubing.js's own verdict on the 3-D view's state: solved or not (null without a 3-D view). */
  async cubingSolved() {
    if (!S.player) return null;
    const pattern = await S.player.experimentalModel.currentPattern.get();
    return pattern.experimentalIsSolved({ ignorePuzzleOrientation: false, ignoreCenterOrientation: true });
  },
};
