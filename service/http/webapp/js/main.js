// The /play page: a reference client that plays every game through the public API.
// It keeps no rules: what may move, and where, is what the last answer's `legal_moves`
// says; hints and solutions come from the solver endpoints. It keeps only a history of
// the answers it received, for undo and redo.

import { api, ApiError } from "./api.js";
import { groupPiles, pileRef, renderBoard } from "./board.js";
import { installSuitSymbols } from "./cards.js";

const $ = (id) => document.getElementById(id);
const ui = {
  form: $("deal-form"), gameSelect: $("game-select"), dealInput: $("deal-input"),
  random: $("random-button"), winnable: $("winnable-button"),
  optionsButton: $("options-button"), optionsPanel: $("options-panel"), optionsFields: $("options-fields"),
  optionsApply: $("options-apply"), optionsReset: $("options-reset"),
  undo: $("undo-button"), redo: $("redo-button"), hint: $("hint-button"), solve: $("solve-button"),
  stockDeal: $("stock-deal-button"), redeal: $("redeal-button"), autoplay: $("autoplay-toggle"),
  status: $("status"), moveCount: $("move-count"), board: $("board"), message: $("message"),
  overlay: $("overlay"), overlayTitle: $("overlay-title"), overlayText: $("overlay-text"),
  overlayUndo: $("overlay-undo"), overlayAgain: $("overlay-again"), overlayNew: $("overlay-new"),
  rulesLink: $("rules-link"), rulesDialog: $("rules-dialog"), rulesTitle: $("rules-title"), rulesText: $("rules-text"),
};

const AUTOPLAY_KEY = "patience.autoplay";
const OPTION_PREFIX = "opt."; // URL parameters carrying rule options: ?game=opus&deal=5&opt.cells=6

const app = {
  games: new Map(), // id -> the game's metadata from GET /v1/games
  game: null,
  deal: null, // decimal string, as the API answers it
  options: {}, // rule options that differ from the game's defaults
  history: [], // {state, legal_moves, status, moves}: one entry per answer
  pos: -1,
  selected: null, // {from, count}
  hint: null, // {from, count, to}
  busy: 0,
  solving: false, // a solution is being played; false stops it
  overlayClosed: false, // the player closed the end screen to look at the board
};

const current = () => app.history[app.pos];

// ---- what the current answer allows ---------------------------------------------------

/** Legal card moves by "from|count", the counts each pile may give, and the other actions. */
function legalIndex(entry) {
  const byPick = new Map();
  const playable = new Map();
  const actions = new Map();
  for (const move of entry ? entry.legal_moves : []) {
    if (move.action !== "move") {
      if (!actions.has(move.action)) actions.set(move.action, move);
      continue;
    }
    const count = move.count || 1;
    const key = `${move.from}|${count}`;
    if (!byPick.has(key)) byPick.set(key, []);
    byPick.get(key).push(move);
    if (!playable.has(move.from)) playable.set(move.from, new Set());
    playable.get(move.from).add(count);
  }
  return { byPick, playable, actions };
}

let legal = legalIndex(null);

const movesFor = (from, count) => legal.byPick.get(`${from}|${count}`) || [];
const findMove = (from, count, to) => movesFor(from, count).find((m) => m.to === to);

/** The stock's piles: clicking one deals (or redeals) when the answer lists that action. */
function stockRefs() {
  const group = app.game.pile_groups.find((g) => g.name === "stock");
  return group ? Array.from({ length: group.count }, (_, i) => pileRef("stock", i)) : [];
}

function stockAction() {
  return legal.actions.get("deal") || legal.actions.get("redeal") || null;
}

// ---- drawing --------------------------------------------------------------------------

function render() {
  const entry = current();
  legal = legalIndex(entry);
  if (!entry) return;
  const targets = app.selected ? new Set(movesFor(app.selected.from, app.selected.count).map((m) => m.to)) : null;
  renderBoard(ui.board, app.game, entry.state, {
    playable: legal.playable,
    selected: app.selected,
    targets,
    hint: app.hint,
    actionPiles: stockAction() ? new Set(stockRefs()) : null,
  });
  const idle = !app.busy && !app.solving;
  ui.undo.disabled = !idle || app.pos <= 0;
  ui.redo.disabled = !idle || app.pos >= app.history.length - 1;
  ui.hint.disabled = !idle || entry.status !== "playing";
  ui.solve.disabled = app.busy > 0 || (!app.solving && entry.status !== "playing");
  ui.solve.textContent = app.solving ? "Stop" : "Solve";
  for (const [button, action] of [[ui.stockDeal, "deal"], [ui.redeal, "redeal"]]) {
    button.hidden = !app.game.actions.includes(action);
    button.disabled = !idle || !legal.actions.has(action);
  }
  ui.moveCount.textContent = String(entry.moves);
  ui.status.textContent = `${app.game.name} · deal ${app.deal}${entry.status === "playing" ? "" : ` · ${entry.status}`}`;
  document.body.dataset.status = entry.status;
  document.body.dataset.moves = String(entry.moves);
  showOverlay(entry);
}

function showOverlay(entry) {
  const over = entry.status !== "playing" && !app.solving && !app.overlayClosed;
  ui.overlay.hidden = !over;
  if (!over) return;
  if (entry.status === "won") {
    ui.overlayTitle.textContent = "You won!";
    ui.overlayText.textContent = `${app.game.name}, deal ${app.deal}, in ${entry.moves} moves.`;
  } else {
    ui.overlayTitle.textContent = "No moves left";
    ui.overlayText.textContent = `${app.game.name}, deal ${app.deal}: this game is lost. Undo a few moves and try another way, or deal again.`;
  }
  ui.overlay.dataset.status = entry.status;
  ui.overlayUndo.hidden = app.pos <= 0;
}

let messageTimer = 0;
function say(text, kind = "info", seconds = 6) {
  ui.message.textContent = text;
  ui.message.className = `message ${kind}`;
  ui.message.hidden = !text;
  clearTimeout(messageTimer);
  if (text && seconds) messageTimer = setTimeout(() => { ui.message.hidden = true; }, seconds * 1000);
}

/** Runs `work` with the page marked busy; API refusals become a message, not an exception. */
async function withBusy(work) {
  app.busy++;
  document.body.dataset.busy = "1";
  render();
  try {
    return await work();
  } catch (error) {
    if (error instanceof ApiError) {
      say(error.message, "error");
    } else {
      say(`Cannot reach the service: ${error.message}`, "error");
      if (!(error instanceof TypeError)) console.error(error);
    }
    return undefined;
  } finally {
    app.busy--;
    document.body.dataset.busy = app.busy ? "1" : "0";
    render();
  }
}

// ---- actions --------------------------------------------------------------------------

function push(answer) {
  const moves = app.pos >= 0 ? current().moves + 1 : 0;
  app.history.length = app.pos + 1; // a new move drops the redo branch
  app.history.push({ state: answer.state, legal_moves: answer.legal_moves, status: answer.status, moves });
  app.pos = app.history.length - 1;
  app.selected = null;
  app.hint = null;
  app.overlayClosed = false;
  if (ui.message.classList.contains("hint")) ui.message.hidden = true; // the hint was for the last position
}

async function newDeal({ deal, winnable } = {}) {
  app.solving = false;
  await withBusy(async () => {
    const answer = await api.deal(app.game.id, { deal, winnable, options: app.options });
    app.deal = answer.deal;
    app.history = [];
    app.pos = -1;
    push(answer);
    ui.dealInput.value = answer.deal;
    const url = new URL(window.location.href);
    const params = new URLSearchParams({ game: app.game.id, deal: answer.deal });
    for (const [name, value] of Object.entries(app.options)) params.set(`${OPTION_PREFIX}${name}`, String(value));
    url.search = params.toString();
    window.history.replaceState(null, "", url);
    if (winnable) say(`Deal ${answer.deal}: the solver says it can be won.`, "info");
  });
}

/** Sends one move of `legal_moves` (the page never invents one). */
async function play(move, { autoplay = ui.autoplay.checked } = {}) {
  const before = current();
  await withBusy(async () => {
    const answer = await api.move(app.game.id, before.state, move, autoplay);
    if (current() !== before) return; // the player undid meanwhile
    push(answer);
  });
}

function select(from, count) {
  app.selected = movesFor(from, count).length ? { from, count } : null;
  app.hint = null;
  render();
}

function clearSelection() {
  if (!app.selected && !app.hint) return;
  app.selected = null;
  app.hint = null;
  render();
}

function undo() {
  if (app.busy || app.solving || app.pos <= 0) return;
  app.pos--;
  app.overlayClosed = false;
  app.selected = null;
  app.hint = null;
  render();
}

function redo() {
  if (app.busy || app.solving || app.pos >= app.history.length - 1) return;
  app.pos++;
  app.overlayClosed = false;
  app.selected = null;
  app.hint = null;
  render();
}

const where = (ref) => {
  const [group, index] = ref.split(":");
  return `${group} ${Number(index) + 1}`;
};

function describe(move) {
  if (move.action !== "move") return move.action === "deal" ? "deal from the stock" : "redeal";
  const count = move.count || 1;
  const [group, index] = move.from.split(":");
  const pile = groupPiles(current().state, group)[Number(index)] || [];
  const card = pile[pile.length - count]; // null for a face-down card of a sealed state
  return `${card || "the card"}${count > 1 ? ` and the ${count - 1} above it` : ""} from ${where(move.from)} to ${where(move.to)}`;
}

/** How many hinted moves that lead back to a position already had a hint avoids at most. */
const HINT_RETRIES = 5;

/** What a state shows, to tell whether a move brings back a position already had. */
const positionKey = (state) => JSON.stringify([state.piles, state.counters]);

async function hint() {
  const entry = current();
  await withBusy(async () => {
    // A hint is a fresh search's first move and the service keeps no history, so one may
    // lead back to a position of this game (and the next hint forward again): such a move
    // is tried (nothing is played), then avoided, and the hint asked again, a few times.
    const had = new Set(app.history.slice(0, app.pos + 1).map((e) => positionKey(e.state)));
    const avoid = [];
    let answer;
    for (;;) {
      answer = await api.hint(app.game.id, entry.state, avoid);
      const cornered = avoid.length + 1 >= Math.min(entry.legal_moves.length, HINT_RETRIES + 1);
      if (current() !== entry || !answer.move || cornered) break;
      const after = await api.move(app.game.id, entry.state, answer.move, ui.autoplay.checked);
      if (!had.has(positionKey(after.state))) break;
      avoid.push(answer.move);
    }
    if (current() !== entry) return;
    const move = answer.move;
    if (!move) {
      say(answer.reason || "No hint: no move helps here.", "warn");
      return;
    }
    app.selected = null;
    app.hint = move.action === "move"
      ? { from: move.from, count: move.count || 1, to: move.to }
      : { from: stockRefs()[0] || "", count: 0, to: "", action: move.action };
    const verdict = answer.winnable === true ? " This position can still be won."
      : answer.winnable === false ? " This position can no longer be won." : "";
    say(`Hint: ${describe(move)}${answer.reason ? ` (${answer.reason})` : ""}.${verdict}`, "hint", 10);
  });
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

async function solve() {
  if (app.solving) {
    app.solving = false; // the running solution stops before its next move
    render();
    return;
  }
  const entry = current();
  say("Solving…", "info", 0);
  const answer = await withBusy(() => api.solve(app.game.id, entry.state));
  if (!answer || current() !== entry) return;
  if (answer.result === "unsolvable") {
    say("The solver proved this position cannot be won.", "warn", 10);
    return;
  }
  if (answer.samples) { // a player-knowledge search (sealed mode's default) guessed at the face-down cards
    say(`The solver cannot see the face-down cards: it won ${answer.samples.won} of ${answer.samples.of} guesses at them.`, "warn", 10);
    return;
  }
  if (answer.result !== "solved") {
    say(`The solver found no answer within ${answer.stats.max_seconds} s: this one is hard.`, "warn", 10);
    return;
  }
  say(`Solution found: ${answer.moves.length} moves. Watch…`, "info", 0);
  app.solving = true;
  render();
  const pause = Math.max(40, Math.min(250, 15000 / Math.max(1, answer.moves.length)));
  for (const move of answer.moves) {
    if (!app.solving) break;
    await play(move, { autoplay: false });
    await sleep(pause);
  }
  const stopped = !app.solving;
  app.solving = false;
  say(stopped ? "Stopped." : "", "info");
  render();
}

async function showRules() {
  await withBusy(async () => {
    const detail = await api.game(app.game.id);
    ui.rulesTitle.textContent = detail.name;
    // The rules come wrapped at a fixed width: re-flow each paragraph.
    const paragraphs = `${detail.description}\n\n${detail.rules}`.split(/\n\s*\n/).map((text) => {
      const p = document.createElement("p");
      p.textContent = text.replace(/\s*\n\s*/g, " ");
      return p;
    });
    ui.rulesText.replaceChildren(...paragraphs);
    ui.rulesDialog.showModal();
  });
}

// ---- pointer: click a card then a target, or drag it ----------------------------------

let press = null; // a pointer held down on a playable card
let swallowClick = false;

function pileOf(el) {
  const pile = el && el.closest("[data-pile]");
  return pile ? pile.dataset.pile : null;
}

function countOf(cardEl) {
  const pile = cardEl.closest(".pile");
  return Number(pile.dataset.count) - Number(cardEl.dataset.index);
}

function onBoardClick(event) {
  if (swallowClick || app.busy || app.solving) return;
  const ref = pileOf(event.target);
  const cardEl = event.target.closest(".card");
  if (!ref) {
    clearSelection();
    return;
  }
  const count = cardEl ? countOf(cardEl) : 0;
  if (app.selected) {
    if (ref === app.selected.from && count === app.selected.count) {
      if (!sendHome(ref, count)) clearSelection();
      return;
    }
    const move = findMove(app.selected.from, app.selected.count, ref);
    if (move) {
      play(move);
      return;
    }
  }
  if (cardEl && cardEl.classList.contains("playable")) {
    select(ref, count);
    pickedAt = performance.now();
    return;
  }
  if (stockRefs().includes(ref) && stockAction()) {
    play(stockAction());
    return;
  }
  clearSelection();
}

/**
 * A second click on a just-picked card sends it to a foundation if it can go there, or to
 * its only target. (Not the dblclick event: the first click redraws the board, so the
 * two clicks land on different elements.)
 */
const DOUBLE_CLICK_MS = 450;
let pickedAt = 0;

function sendHome(ref, count) {
  if (performance.now() - pickedAt > DOUBLE_CLICK_MS) return false;
  const moves = movesFor(ref, count);
  const move = moves.find((m) => m.to.startsWith("foundation:")) || (moves.length === 1 ? moves[0] : null);
  if (move) play(move);
  return Boolean(move);
}

function onPointerDown(event) {
  if (event.button !== 0 || app.busy || app.solving) return;
  const cardEl = event.target.closest(".card.playable");
  if (!cardEl) return;
  press = { from: pileOf(cardEl), count: countOf(cardEl), x: event.clientX, y: event.clientY, ghost: null };
}

function startDrag() {
  select(press.from, press.count); // re-renders, marking the legal targets
  const pile = ui.board.querySelector(`.pile[data-pile="${press.from}"]`);
  const first = Number(pile.dataset.count) - press.count;
  const cards = [...pile.querySelectorAll(".card")].filter((c) => Number(c.dataset.index) >= first);
  const ghost = document.createElement("div");
  ghost.className = "drag-ghost";
  const origin = cards[0].getBoundingClientRect();
  ghost.style.left = `${origin.left}px`;
  ghost.style.top = `${origin.top}px`;
  for (const card of cards) {
    const rect = card.getBoundingClientRect();
    const copy = card.cloneNode(true);
    copy.style.left = `${rect.left - origin.left}px`;
    copy.style.top = `${rect.top - origin.top}px`;
    ghost.append(copy);
    card.classList.add("lifted");
  }
  ghost.style.width = `${origin.width}px`;
  ui.board.append(ghost); // inside the board, for its card size; fixed, so it follows the pointer
  document.body.classList.add("dragging");
  press.ghost = ghost;
}

/** The highlighted target under the point, with a little slack around each pile. */
function targetAt(x, y) {
  const slack = 14;
  for (const pile of ui.board.querySelectorAll(".pile.target")) {
    const r = pile.getBoundingClientRect();
    if (x >= r.left - slack && x <= r.right + slack && y >= r.top - slack && y <= r.bottom + slack) return pile;
  }
  return null;
}

function onPointerMove(event) {
  if (!press) return;
  const dx = event.clientX - press.x;
  const dy = event.clientY - press.y;
  if (!press.ghost) {
    if (Math.hypot(dx, dy) < 6) return;
    startDrag();
  }
  press.ghost.style.transform = `translate(${dx}px, ${dy}px)`;
  const over = targetAt(event.clientX, event.clientY);
  for (const pile of ui.board.querySelectorAll(".pile.drop-over")) if (pile !== over) pile.classList.remove("drop-over");
  if (over) over.classList.add("drop-over");
}

function endDrag(event, drop) {
  const held = press;
  press = null;
  if (!held || !held.ghost) return;
  held.ghost.remove();
  document.body.classList.remove("dragging");
  swallowClick = true;
  setTimeout(() => { swallowClick = false; }, 0);
  const over = drop ? targetAt(event.clientX, event.clientY) : null;
  const move = over ? findMove(held.from, held.count, over.dataset.pile) : null;
  if (move) {
    play(move);
  } else {
    app.selected = null;
    render();
  }
}

// ---- rule options: a form built from the game's `options` ------------------------------

/** An option's value from text (URL or input): integers where the option is numeric. */
function optionValue(spec, text) {
  return typeof spec.default === "number" && /^-?[0-9]+$/.test(text) ? Number(text) : text;
}

function renderOptions() {
  const fields = app.game.options.map((spec) => {
    const label = document.createElement("label");
    label.title = spec.description;
    const name = document.createElement("span");
    name.textContent = spec.name.replaceAll("_", " ");
    let input;
    if (spec.choices) {
      input = document.createElement("select");
      for (const choice of spec.choices) input.append(new Option(String(choice), String(choice)));
    } else {
      input = document.createElement("input");
      input.type = typeof spec.default === "number" ? "number" : "text";
      if (spec.minimum !== null) input.min = String(spec.minimum);
      if (spec.maximum !== null) input.max = String(spec.maximum);
    }
    input.name = spec.name;
    input.value = String(spec.name in app.options ? app.options[spec.name] : spec.default);
    label.classList.toggle("changed", spec.name in app.options);
    label.append(name, input);
    return label;
  });
  ui.optionsFields.replaceChildren(...fields);
  ui.optionsButton.hidden = !app.game.options.length;
  if (!app.game.options.length) ui.optionsPanel.hidden = true;
}

function readOptions() {
  const options = {};
  for (const spec of app.game.options) {
    const input = ui.optionsFields.querySelector(`[name="${spec.name}"]`);
    const value = optionValue(spec, input.value.trim());
    if (value !== spec.default) options[spec.name] = value;
  }
  return options;
}

function toggleOptions() {
  ui.optionsPanel.hidden = !ui.optionsPanel.hidden;
  ui.optionsButton.setAttribute("aria-expanded", String(!ui.optionsPanel.hidden));
}

// ---- start ----------------------------------------------------------------------------

function chooseGame(id, options = {}) {
  app.game = app.games.get(id) || app.games.values().next().value;
  app.options = options;
  ui.gameSelect.value = app.game.id;
  renderOptions();
}

function wire() {
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    const deal = ui.dealInput.value.trim();
    if (deal && !/^[0-9]{1,20}$/.test(deal)) {
      say("A deal number is 1 to 20 digits.", "error");
      return;
    }
    newDeal({ deal });
  });
  ui.gameSelect.addEventListener("change", () => {
    chooseGame(ui.gameSelect.value);
    const deal = ui.dealInput.value.trim();
    newDeal({ deal: /^[0-9]{1,20}$/.test(deal) ? deal : undefined });
  });
  ui.random.addEventListener("click", () => newDeal());
  ui.optionsButton.addEventListener("click", toggleOptions);
  ui.optionsApply.addEventListener("click", () => {
    app.options = readOptions();
    renderOptions();
    newDeal({ deal: app.deal });
  });
  ui.optionsReset.addEventListener("click", () => {
    app.options = {};
    renderOptions();
    newDeal({ deal: app.deal });
  });
  ui.winnable.addEventListener("click", () => newDeal({ winnable: true }));
  ui.undo.addEventListener("click", undo);
  ui.redo.addEventListener("click", redo);
  ui.hint.addEventListener("click", hint);
  ui.solve.addEventListener("click", solve);
  ui.stockDeal.addEventListener("click", () => { if (legal.actions.has("deal")) play(legal.actions.get("deal")); });
  ui.redeal.addEventListener("click", () => { if (legal.actions.has("redeal")) play(legal.actions.get("redeal")); });
  ui.autoplay.checked = localStorage.getItem(AUTOPLAY_KEY) !== "off";
  ui.autoplay.addEventListener("change", () => localStorage.setItem(AUTOPLAY_KEY, ui.autoplay.checked ? "on" : "off"));
  ui.overlayUndo.addEventListener("click", undo);
  ui.overlay.addEventListener("click", (event) => {
    if (event.target !== ui.overlay) return; // a click beside the box closes it
    app.overlayClosed = true;
    render();
  });
  ui.overlayAgain.addEventListener("click", () => newDeal({ deal: app.deal }));
  ui.overlayNew.addEventListener("click", () => newDeal());
  ui.rulesLink.addEventListener("click", (event) => { event.preventDefault(); showRules(); });
  ui.board.addEventListener("click", onBoardClick);
  ui.board.addEventListener("pointerdown", onPointerDown);
  document.addEventListener("pointermove", onPointerMove);
  document.addEventListener("pointerup", (event) => endDrag(event, true));
  document.addEventListener("pointercancel", (event) => endDrag(event, false));
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea")) return;
    const key = event.key.toLowerCase();
    if ((event.ctrlKey || event.metaKey) && key === "z") {
      event.preventDefault();
      if (event.shiftKey) redo(); else undo();
    } else if ((event.ctrlKey || event.metaKey) && key === "y") {
      event.preventDefault();
      redo();
    } else if (key === "h" && !ui.hint.disabled) {
      hint();
    } else if (key === "escape") {
      if (!ui.overlay.hidden) {
        app.overlayClosed = true;
        render();
      }
      clearSelection();
    }
  });
  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(render, 100);
  });
}

async function start() {
  installSuitSymbols();
  wire();
  document.body.dataset.busy = "1";
  const loaded = await withBusy(async () => {
    const list = await api.games();
    for (const game of list.games) {
      app.games.set(game.id, game);
      ui.gameSelect.append(new Option(game.name, game.id));
    }
    return true;
  });
  if (!loaded) return;
  const params = new URLSearchParams(window.location.search);
  const wanted = params.get("game");
  const game = app.games.get(wanted);
  const options = {};
  for (const spec of game ? game.options : []) {
    const text = params.get(`${OPTION_PREFIX}${spec.name}`);
    if (text !== null) options[spec.name] = optionValue(spec, text);
  }
  chooseGame(wanted, options);
  if (wanted && wanted !== app.game.id) say(`No game "${wanted}" here: playing ${app.game.name}.`, "warn");
  const deal = params.get("deal");
  await newDeal({ deal: deal && /^[0-9]{1,20}$/.test(deal) ? deal : undefined });
}

start();
