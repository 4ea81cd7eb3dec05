// Cube page. The cube's state is kept as an alg from solved (`S.base` plus the part of a loaded
// solution already played): cubing.js draws algs, not facelets. The server is the judge of the
// state: every change is sent to /api/move, whose answer (state text, solved flag, SVG in 2-D mode)
// drives the solved badge. Facelet input (pasted, or entered by colours on the sticker net) is
// solved by the server and shown as the inverse of the solution. Solutions are shown as people
// write them (the server's `notation`: R R as R2). The page's URL carries the position and its
// solution (`?alg=...&solution=...`), so a link opens both. Without cubing.js the page draws the
// server's SVG instead of the 3-D cube.
import { api, busy, el, fillMethods, fillPuzzleSelect, listFound, setSolved, showProgress, setStatus, showStats, solveBody, solveQueued, waitText } from "./api.js";
import { Hints } from "./hints.js";
import { StickerNet } from "./net.js";
import { Playback } from "./playback.js";

const CUBING_PUZZLE = { cube3: "3x3x3", cube2: "2x2x2" };
const FACES = ["U", "D", "L", "R", "F", "B"];
const MOVE_TOKEN = /^[UDLRFB](2'?|')?$/;

const S = {
  puzzle: "cube3",
  actions: [],       // the puzzle's move names
  base: [],          // alg from solved to the state the loaded solution starts from
  stateText: "",     // server's canonical text of the current state
  solved: true,
  frames: null,      // /api/move trajectory of the loaded solution
  player: null,      // <twisty-player> when cubing.js loaded
  seq: 0,            // bumps on every state change; stale /api/move answers are dropped
  solving: false,    // a solve of this page is running
  epoch: 0,          // bumps when the position changes; a solve started before is not shown
};

const invertMove = (m) => (m.endsWith("2") || m.endsWith("2'") ? m.replace("'", "") : m.endsWith("'") ? m.slice(0, -1) : `${m}'`);
export const invertAlg = (moves) => moves.slice().reverse().map(invertMove);
/** Our puzzles name quarter turns only: a half turn X2 is sent as X X. */
const quarterTurns = (moves) => moves.flatMap((m) => (m.includes("2") ? [m[0], m[0]] : [m]));

const pb = new Playback({ show: showPosition, onChange: () => {} });
const currentAlg = () => S.base.concat(pb.moves.slice(0, pb.pos));
const hints = new Hints({ play: (move) => turn(move) });
const net = new StickerNet({ puzzle: S.puzzle });
const splitMoves = (text) => (text ?? "").trim().split(/\s+/).filter(Boolean);

/** The page's URL: the puzzle, the position (as moves from solved) and the loaded solution. */
function writeLink() {
  const params = new URLSearchParams();
  if (S.puzzle !== "cube3") params.set("puzzle", S.puzzle);
  const alg = pb.loaded ? S.base : currentAlg();
  if (alg.length) params.set("alg", alg.join(" "));
  if (pb.loaded) params.set("solution", pb.moves.join(" "));
  const query = params.toString();
  history.replaceState(null, "", query ? `/?${query}` : "/");
}

// ---- drawing --------------------------------------------------------------------------------
function redraw3d() {
  if (!S.player) return;
  S.player.experimentalSetupAlg = S.base.join(" ");
  S.player.alg = pb.moves.slice(0, pb.pos).join(" ");
  S.player.timestamp = "end";
}

function draw2d(svg) {
  if (S.player || !svg) return;
  document.getElementById("cube-2d").innerHTML = svg; // our own server's SVG
}

function applyFrame(frame) {
  S.seq += 1;
  S.stateText = frame.state;
  S.solved = frame.solved;
  setSolved(frame.solved);
  draw2d(frame.svg);
  hints.show(S.puzzle, frame.state);
}

/** Ask the server for the state of the current alg (drops answers overtaken by newer changes). */
async function syncState() {
  const seq = ++S.seq;
  const data = await api("/api/move", { puzzle: S.puzzle, moves: quarterTurns(currentAlg()), svg: !S.player });
  if (seq !== S.seq) return;
  S.stateText = data.state;
  S.solved = data.solved;
  setSolved(data.solved);
  draw2d(data.svg);
  hints.show(S.puzzle, data.state);
}

async function showPosition(pos, from) {
  if (S.player) {
    if (pos === from + 1) S.player.experimentalAddMove(pb.moves[from]);
    else redraw3d();
  }
  if (S.frames) applyFrame(S.frames[pos]);
}

// ---- changing the state ---------------------------------------------------------------------
/** Start over from `alg` (moves from solved), dropping any loaded solution. */
async function setAlg(alg) {
  S.epoch += 1;
  listFound(null);
  S.base = alg.slice();
  S.frames = null;
  pb.clear();
  showStats(null);
  redraw3d();
  writeLink();
  await syncState();
}

function turn(move) {
  if (!S.actions.includes(move)) return;
  S.epoch += 1;
  listFound(null);
  if (pb.loaded) { // keep the played part of the solution, forget the rest
    S.base = currentAlg();
    S.frames = null;
    pb.clear();
    showStats(null);
  }
  S.base.push(move);
  if (S.player) S.player.experimentalAddMove(move);
  writeLink();
  syncState().catch((err) => setStatus(err.message, "error"));
}

async function scramble() {
  const depth = Number(document.getElementById("depth").value) || 20;
  const data = await api(`/api/scramble?puzzle=${S.puzzle}&depth=${depth}&svg=${!S.player}`);
  await setAlg(data.moves);
  setStatus(`scrambled with ${data.moves.length} random moves (seed ${data.seed})`, "ok");
}

async function loadInput() {
  const text = document.getElementById("input").value.trim();
  const tokens = text ? text.split(/\s+/) : [];
  if (tokens.every((t) => MOVE_TOKEN.test(t))) {
    await api("/api/move", { puzzle: S.puzzle, moves: quarterTurns(tokens) }); // checks the names
    await setAlg(tokens);
    setStatus(`loaded a ${tokens.length}-move scramble`, "ok");
    return;
  }
  const check = await api("/api/validate", { puzzle: S.puzzle, state: text });
  if (!check.valid) throw new Error(check.message);
  setStatus("facelets are valid; solving them to find a setup alg for the 3-D view…");
  const res = await solveQueued(solveBody(S.puzzle, check.state), (job) => setStatus(`facelets are valid: ${waitText(job)}`));
  if (!res.solved) throw new Error("the solver found no solution within the time limit, so this state cannot be shown as an alg; raise the time limit");
  await setAlg(invertAlg(written(res).moves));
  setStatus(`facelets loaded as the inverse of a ${res.length}-move solution`, "ok");
}

/** A solve answer's moves as people write them (R2), with layered solving's stages alike. */
function written(res) {
  const stages = res.stages && res.stages.every((st) => Array.isArray(st.notation ?? st.solution))
    ? res.stages.map((st) => ({ ...st, solution: st.notation ?? st.solution }))
    : null;
  const moves = stages ? stages.flatMap((st) => st.solution) : (res.notation ?? res.solution);
  return { moves, stages };
}

/** Load `moves` (solving `state`, the current position) into the playback, one frame a move. */
async function showSolution(state, moves, stages = null) {
  const traj = await api("/api/move", {
    puzzle: S.puzzle, state, moves, trajectory: true, svg: !S.player,
  });
  if (!traj.frames[traj.frames.length - 1].solved) throw new Error(`${moves.join(" ")} does not solve this position`);
  S.frames = traj.frames;
  pb.load(moves, stages);
  redraw3d();
  applyFrame(S.frames[0]);
  writeLink();
}

/** Solve the cube entered on the sticker net: it becomes the position, its solution loaded. */
async function solveNet() {
  const check = await net.check();
  if (!check.valid) throw new Error(`the colours are not a cube one can reach by turning: ${check.message}`);
  setStatus("solving the entered cube…");
  const res = await solveQueued(solveBody(S.puzzle, check.state), (job) => setStatus(waitText(job)));
  showStats(res);
  if (!res.solved) throw new Error("the solver found no solution within the time limit; raise the time limit");
  const { moves, stages } = written(res);
  S.epoch += 1;
  listFound(null);
  S.base = invertAlg(moves);
  S.frames = null;
  pb.clear();
  await showSolution(check.state, moves, stages);
  setStatus(`the entered cube: a ${res.length}-move solution (${moves.length} as written), press Play`, "ok");
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
  if (pb.loaded) { S.base = currentAlg(); S.frames = null; pb.clear(); }
  const epoch = ++S.epoch;
  listFound(null);
  await syncState();
  if (S.solved) { setStatus("the cube is already solved", "ok"); return; }
  setStatus("solving…");
  const state = S.stateText;
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
  const res = await solveQueued(solveBody(S.puzzle, state), (job) => { if (current()) setStatus(waitText(job)); }, onImprovement);
  if (!current()) { setStatus("the cube changed while solving: solve again", "error"); return; }
  showStats(res);
  if (!res.solved) {
    setStatus(`no solution within the limits (${res.nodes_generated.toLocaleString("en-US")} nodes)`, "error");
    return;
  }
  const { moves, stages } = written(res);
  if (untouched() || pb.moves.join(" ") === moves.join(" ")) {
    await showSolution(state, moves, stages);
    setStatus(`found a ${res.length}-move solution: press Play`, "ok");
  } else {
    setStatus(`found a ${res.length}-move solution; the one being played stays (pick another in the list)`, "ok");
  }
}

// ---- set-up ---------------------------------------------------------------------------------
async function load3d(info) {
  if (!info.cubing) return "cubing.js is not installed on the server (run `npm ci` in the repository root)";
  try {
    await import("cubing/twisty");
  } catch (err) {
    return `cubing.js failed to load (${err.message})`;
  }
  const player = document.createElement("twisty-player");
  player.puzzle = CUBING_PUZZLE[S.puzzle];
  player.controlPanel = "none";
  player.background = "none";
  player.hintFacelets = "floating";
  player.backView = "none";
  player.tempoScale = 2;
  document.getElementById("cube-3d").append(player);
  S.player = player;
  return null;
}

function buildMoveButtons() {
  const box = document.getElementById("move-buttons");
  box.replaceChildren(...S.actions.map((m) => el("button", { type: "button", class: "move", onclick: () => turn(m) }, m)));
}

function onKey(event) {
  if (event.target.closest("input, textarea, select") || event.ctrlKey || event.metaKey || event.altKey) return;
  const face = event.code.startsWith("Key") ? event.code.slice(3) : "";
  if (FACES.includes(face)) {
    event.preventDefault();
    turn(event.shiftKey ? `${face}'` : face);
  } else if (event.code === "Space") {
    event.preventDefault();
    pb.toggle();
  } else if (event.code === "ArrowRight") {
    pb.pause(); pb.step();
  } else if (event.code === "ArrowLeft") {
    pb.pause(); pb.seek(pb.pos - 1);
  }
}

async function selectPuzzle(name, puzzles, info) {
  const p = puzzles.find((q) => q.name === name);
  fillMethods(info, p);
  S.puzzle = p.name;
  S.actions = p.action_names;
  document.getElementById("depth").value = Math.min(20, p.default_scramble_depth);
  buildMoveButtons();
  net.setPuzzle(p.name, null);
  if (S.player) S.player.puzzle = CUBING_PUZZLE[p.name] ?? "3x3x3";
  await setAlg([]);
  const method = document.getElementById("method").selectedOptions[0]?.textContent ?? "";
  setStatus(p.model ? "ready: scramble, turn with the keys, or paste a state"
    : `ready (no trained model is shipped for ${p.name} yet; method: ${method})`, "ok");
}

async function init() {
  const [info, all] = await Promise.all([api("/api/info"), api("/api/puzzles")]);
  const cubes = all.filter((p) => p.kind === "cube");
  const problem = await load3d(info);
  const notice = document.getElementById("notice");
  if (problem) {
    notice.textContent = `3-D view unavailable: ${problem}. Showing a 2-D drawing instead.`;
    notice.hidden = false;
    document.getElementById("cube-3d").hidden = true;
    document.getElementById("cube-2d").hidden = false;
  }
  document.getElementById("view-mode").textContent = S.player ? "3-D (cubing.js)" : "2-D (SVG)";
  const select = document.getElementById("puzzle");
  fillPuzzleSelect(select, cubes, "cube3");
  select.addEventListener("change", () => busy(select, () => selectPuzzle(select.value, cubes, info)));
  const on = (id, fn) => { const b = document.getElementById(id); b.addEventListener("click", () => busy(b, fn)); };
  on("scramble", scramble);
  on("reset", async () => { await setAlg([]); setStatus("reset to solved", "ok"); });
  on("load", loadInput);
  on("solve", solve);
  on("net-solve", solveNet);
  on("net-from-cube", () => net.set(S.stateText));
  on("net-clear", () => net.set(null));
  document.addEventListener("keydown", onKey);
  const link = new URLSearchParams(location.search);
  const wanted = cubes.some((p) => p.name === link.get("puzzle")) ? link.get("puzzle") : "cube3";
  select.value = wanted;
  await selectPuzzle(wanted, cubes, info);
  await openLink(link);
}

/** Open what a link names: `alg` (moves from solved) and its `solution`, or `state` (facelets,
 * shown on the sticker net, ready to solve). */
async function openLink(link) {
  const alg = splitMoves(link.get("alg"));
  const solution = splitMoves(link.get("solution"));
  if (link.get("state")) {
    const check = await net.set(link.get("state").trim());
    setStatus(check.valid ? "the link's cube is on the sticker net: press Solve this cube" : check.message,
      check.valid ? "ok" : "error");
    return;
  }
  if (!alg.length && !solution.length) return;
  await api("/api/move", { puzzle: S.puzzle, moves: quarterTurns(alg) }); // checks the names
  await setAlg(alg);
  if (!solution.length) { setStatus(`opened the link's ${alg.length}-move position`, "ok"); return; }
  try {
    await showSolution(S.stateText, solution);
  } catch (err) {
    throw new Error(`the link's solution was not loaded: ${err.message}`);
  }
  setStatus(`opened the link's position and its ${solution.length}-move solution: press Play`, "ok");
}

/** Hooks for tests and the console: a snapshot of the page's state, and cubing.js's own verdict. */
window.pz = {
  ready: init().catch((err) => setStatus(err.message, "error")),
  snapshot: () => ({
    puzzle: S.puzzle, alg: currentAlg().join(" "), state: S.stateText, solved: S.solved,
    mode: S.player ? "3d" : "2d", solution: pb.moves.slice(), pos: pb.pos, playing: pb.playing, solving: S.solving,
    net: net.facelets,
  }),
  async cubingSolved() {
    if (!S.player) return null;
    const pattern = await S.player.experimentalModel.currentPattern.get();
    return pattern.experimentalIsSolved({ ignorePuzzleOrientation: true, ignoreCenterOrientation: true });
  },
};
