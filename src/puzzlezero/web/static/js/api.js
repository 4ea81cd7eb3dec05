// Small helpers shared by the pages: JSON API calls, DOM building, status messages.

/** Call the JSON API. GET when body is undefined; throws Error(detail) on an error status. */
export async function api(path, body) {
  const init = body === undefined
    ? { method: "GET" }
    : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (err) {
    throw new Error(`cannot reach the server (${err.message})`);
  }
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!resp.ok) {
    const detail = data && data.detail ? data.detail : `${resp.status} ${resp.statusText}`;
    const error = new Error(detail);
    error.status = resp.status;
    throw error;
  }
  return data;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** 1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st. */
export function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] ?? "th";
  return `${n}${suffix}`;
}

/** "about 40 s", "about 3 min". */
export function aboutSeconds(seconds) {
  if (seconds < 90) return `about ${Math.max(1, Math.round(seconds))} s`;
  return `about ${Math.round(seconds / 60)} min`;
}

/** What a waiting solve's status line says: its place in line and the expected wait, and once it
 * runs, the best solution found so far. */
export function waitText(job) {
  if (job.status === "queued") {
    const place = job.position === 1 ? "next in line" : `${ordinal(job.position)} in line`;
    return `queued: ${place}, ${aboutSeconds(job.estimated_start_seconds)} until it starts`;
  }
  const left = job.estimated_seconds > 0.5 ? ` ${aboutSeconds(job.estimated_seconds)} left` : "";
  const found = job.improvements ?? [];
  if (found.length) {
    const best = found[found.length - 1];
    return `found a ${best.length}-move solution after ${best.seconds.toFixed(1)} s; looking for a shorter one…${left}`;
  }
  return `solving…${left}`;
}

/** The list of solutions a solve found on its way (#found): each one's length, when and what found
 * it, a click loads it. `null` clears the list. */
export function listFound(improvement, load) {
  const list = document.getElementById("found");
  if (!list) return;
  if (improvement === null) { list.replaceChildren(); list.hidden = true; return; }
  list.hidden = false;
  list.querySelectorAll(".found-row").forEach((row) => row.classList.remove("newest"));
  list.append(el("li", { class: "found-row newest", dataset: { length: String(improvement.length) } },
    el("button", { type: "button", class: "chip", title: `show this ${improvement.length}-move solution`,
      onclick: () => load(improvement) }, `${improvement.length} moves`),
    ` after ${improvement.seconds.toFixed(1)} s (${improvement.stage})`));
}

let pendingJob = null; // the id of this page's job in the server's line, if any

// Leaving the page gives its place in the line to the next person.
window.addEventListener("pagehide", () => {
  if (pendingJob) fetch(`/api/jobs/${pendingJob}`, { method: "DELETE", keepalive: true }).catch(() => {});
});

/**
 * Solve through the server's waiting line: POST /api/jobs, then poll GET /api/jobs/{id} until the
 * job ends. `onWait(job)` gets each queued/running status (place in line, expected wait, the
 * solutions found so far); `onImprovement(improvement)` each solution the running solve reports
 * before its answer (the first, then each shorter one), once. Returns the solve answer (as
 * POST /api/solve gives it); throws Error(detail) when it failed.
 */
export async function solveQueued(body, onWait = () => {}, onImprovement = null) {
  let job = await api("/api/jobs", body);
  pendingJob = job.id;
  let seen = 0;
  const report = async () => {
    const found = job.improvements ?? [];
    for (; onImprovement && seen < found.length; seen += 1) await onImprovement(found[seen]);
  };
  try {
    for (let polls = 0; job.status === "queued" || job.status === "running"; polls += 1) {
      onWait(job);
      await report();
      await sleep(Math.min(1000, 100 * 2 ** polls)); // a quick answer comes back quickly
      job = await api(`/api/jobs/${job.id}`);
    }
    await report();
  } finally {
    pendingJob = null;
  }
  if (job.status === "done") return job.result;
  const error = new Error(job.error ? job.error.detail : "the solve was cancelled");
  error.status = job.error ? job.error.status : 0;
  throw error;
}

/** document.createElement with attributes ({class, dataset, on*, ...}) and children. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** The message line under the controls: kind is "info", "ok" or "error". */
export function setStatus(text, kind = "info") {
  const node = document.getElementById("status");
  node.textContent = text;
  node.dataset.kind = kind;
}

/** Run an async action with its button disabled; errors go to the status line. */
export async function busy(button, action) {
  if (button) button.disabled = true;
  try {
    return await action();
  } catch (err) {
    setStatus(err.message, "error");
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

/** Solved badge: the page's own indicator, computed by the server from the puzzle state. */
export function setSolved(solved) {
  const badge = document.getElementById("solved-badge");
  badge.dataset.solved = String(Boolean(solved));
  badge.textContent = solved ? "solved" : "not solved";
}

/** Fill the solve statistics panel from a /api/solve answer (or clear it with null). */
export function showStats(result) {
  const set = (id, value) => { document.getElementById(id).textContent = value; };
  if (!result) {
    for (const id of ["stat-length", "stat-nodes", "stat-time"]) set(id, "–");
    return;
  }
  const htm = result.half_turn_length != null ? ` (${result.half_turn_length} in half turns)` : "";
  // layered solving: the moves of each goal's stage (layer1 7 + layer2 12 + solved 21)
  const stages = result.solved && result.stages
    ? ` = ${result.stages.map((st) => `${st.goal} ${st.length}`).join(" + ")}`
    : "";
  // the puzzle's own search found none in time and the model-free fallback answered (group, reduction)
  const rescued = result.solved && result.fallback ? ` (by the ${result.fallback} fallback: the search found none in time)` : "";
  set("stat-length", result.solved ? `${result.length} moves${htm}${stages}${rescued}` : "not found");
  set("stat-nodes", result.nodes_generated.toLocaleString("en-US"));
  // anytime solving keeps improving after the first solution: say when that one came
  const first = result.first_solution_seconds != null && result.improvements && result.improvements.length > 1
    ? ` (first solution after ${result.first_solution_seconds.toFixed(1)} s, ${result.improvements[0].length} moves)`
    : "";
  set("stat-time", `${result.seconds.toFixed(2)} s${first}`);
}

/** The statistics panel while a solve runs: the best solution found so far. */
export function showProgress(found) {
  document.getElementById("stat-length").textContent = `${found.length} moves so far (looking for a shorter one)`;
  document.getElementById("stat-nodes").textContent = found.nodes_generated.toLocaleString("en-US");
  document.getElementById("stat-time").textContent = `found after ${found.seconds.toFixed(2)} s`;
}

/** Options of a <select> from the puzzle list, keeping `selected`. */
export function fillPuzzleSelect(select, puzzles, selected) {
  select.replaceChildren(
    ...puzzles.map((p) => el("option", { value: p.name, selected: p.name === selected }, `${p.name} – ${p.description}`)),
  );
}

/** Solving methods: request fields, and which searches / heuristics the server must know. */
const METHODS = {
  // the puzzle's own search with its anytime schedule (cube: Q* with the Q head; others: BWAS)
  learned: { label: "learned heuristic, best within the time limit", body: {}, needs: ["learned"] },
  bwas: { label: "learned heuristic + batch weighted A*", body: { search: "bwas" }, needs: ["bwas", "learned"] },
  greedy: { label: "learned heuristic, greedy", body: { search: "gbfs" }, needs: ["gbfs", "learned"] },
  optimal: { label: "optimal solver", body: { search: "optimal" }, needs: ["optimal"] },
  pdb: { label: "pattern databases + batch weighted A*", body: { search: "bwas", heuristic: "pdb" }, needs: ["bwas", "pdb"] },
  kociemba: { label: "Kociemba two-phase", body: { search: "kociemba" }, needs: ["kociemba"] },
  layered: { label: "layer by layer (one network per goal)", body: { search: "layered" }, needs: ["layered", "learned"] },
  // no model needed: the count of misplaced cells as the heuristic (short scrambles)
  misplaced: { label: "misplaced cells + batch weighted A* (no model)", body: { search: "bwas", heuristic: "misplaced" }, needs: ["bwas", "misplaced"] },
  group: { label: "group solver (no model, long solutions)", body: { search: "group" }, needs: ["group"] },
};
/** Puzzles of a plugin or defined as data: solved without a model by the misplaced-cells heuristic. */
const MODEL_FREE = new Set(["permutation", "other"]);

/** Puzzles whose optimal solver answers in about a second from scratch (GF(2), small tables). */
const CHEAP_OPTIMAL = new Set(["lightsout7", "cube2", "puzzle8"]);

/** Fill the method <select> for a puzzle. */
export function fillMethods(info, puzzle) {
  const known = new Set([...Object.keys(info.searches), ...Object.keys(info.heuristics)]);
  let names = puzzle.kind === "sokoban" ? ["learned", "greedy"] : ["learned", "bwas", "greedy", "optimal", "pdb"];
  if (puzzle.name === "cube3") names.push("kociemba");
  if (puzzle.layered_model) names.push("layered"); // shipped models for each goal (cube3-layered)
  if (MODEL_FREE.has(puzzle.kind)) names.push("misplaced");
  if (puzzle.kind === "permutation") names.push("group");
  // a policy without a value (lightsout7): its own search, the policy beam, and no value searches
  if (puzzle.policy_only) names = names.filter((n) => n !== "bwas" && n !== "greedy");
  names = names.filter((n) => METHODS[n].needs.every((x) => known.has(x)));
  // Without a shipped model, default to the optimal solver where it needs no big tables, and to
  // the misplaced-cells search for a plugin's puzzle or one defined as data.
  let preferred = "learned";
  if (!puzzle.model && CHEAP_OPTIMAL.has(puzzle.name) && names.includes("optimal")) preferred = "optimal";
  else if (!puzzle.model && MODEL_FREE.has(puzzle.kind) && names.includes("misplaced")) preferred = "misplaced";
  const select = document.getElementById("method");
  select.replaceChildren(...names.map((n) => el("option", { value: n, selected: n === preferred }, METHODS[n].label)));
}

/** The solve request for `puzzle` and `state` with the method and time limit chosen on the page. */
export function solveBody(puzzle, state) {
  const value = Number(document.getElementById("time-limit").value);
  const method = METHODS[document.getElementById("method").value] ?? METHODS.learned;
  return { puzzle, state, time_limit: Number.isFinite(value) && value > 0 ? value : 20, ...method.body };
}
