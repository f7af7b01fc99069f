// Laying out any game from its metadata: pile groups placed on a grid of card slots
// (`row`, `column`, `per_row`), each pile spread as the group says (`fan`, `face_down`).
// Knows nothing of any game's rules. A sealed state (STATE_PROTECTION=sealed) gives a
// face-down group only its piles' card counts (`state.face_down`), never its cards.

import { backElement, cardElement } from "./cards.js";

const FAN_DOWN = 0.25; // face-up overlap down, in card heights
const FAN_RIGHT = 0.32; // overlap right, in card widths
const CARD_IN_SLOT = 0.88; // a card's width in slot widths; the rest is the gap
const MAX_PILE_HEIGHTS = 5.2; // a down-fanned pile squeezes its cards to stay within this many card heights

/** "tableau:3" */
export const pileRef = (group, index) => `${group}:${index}`;

/**
 * The piles of group `name` in `state`, bottom card first: a sealed state's face-down
 * piles as that many unknown cards (null), since only their counts travel; [] if absent.
 */
export function groupPiles(state, name) {
  const counts = state.face_down && state.face_down[name];
  if (counts) return counts.map((n) => Array(n).fill(null));
  return (state.piles && state.piles[name]) || [];
}

const longest = new Map(); // "game:group" -> most cards seen in one pile, so a group keeps its width

/** Card slots one pile of `group` takes across: one, or as many as its longest right-fanned pile needs. */
function pileSpan(game, group, state) {
  if (group.fan !== "right") return 1;
  const key = `${game.id}:${group.name}`;
  const piles = groupPiles(state, group.name);
  const most = Math.max(longest.get(key) || 1, ...piles.map((p) => p.length));
  longest.set(key, most);
  return Math.max(1, Math.ceil((1 + (most - 1) * FAN_RIGHT) * CARD_IN_SLOT - 0.01));
}

/** Card geometry for a board of `width` pixels; `spans` are the groups' pile spans. */
function geometry(game, spans, width) {
  const columns = Math.max(...game.pile_groups.map((g) => g.column + g.per_row * spans.get(g.name)));
  const slot = Math.max(34, Math.min(104, Math.floor(width / columns)));
  const cw = Math.round(slot * CARD_IN_SLOT);
  return { columns, slot, cw, ch: Math.round(cw * 1.4), gap: slot - cw, spans };
}

/**
 * Builds the board's DOM for `state` (the API's state object).
 * `marks` says which cards to decorate: playable (Map ref -> Set of counts),
 * selected ({from, count}), targets (Set of refs), hint ({from, count, to}).
 */
export function renderBoard(board, game, state, marks) {
  const spans = new Map(game.pile_groups.map((g) => [g.name, pileSpan(game, g, state)]));
  const geo = geometry(game, spans, (board.parentElement && board.parentElement.clientWidth - 48) || 800);
  board.style.width = `${geo.columns * geo.slot}px`;
  board.style.setProperty("--cw", `${geo.cw}px`);
  board.style.setProperty("--ch", `${geo.ch}px`);
  board.style.setProperty("--slot", `${geo.slot}px`);
  board.style.setProperty("--gap", `${geo.gap}px`);
  const bands = new Map();
  for (const group of game.pile_groups) {
    if (!bands.has(group.row)) bands.set(group.row, []);
    bands.get(group.row).push(group);
  }
  const frag = document.createDocumentFragment();
  for (const row of [...bands.keys()].sort((a, b) => a - b)) {
    const band = document.createElement("div");
    band.className = "band";
    band.style.gridTemplateColumns = `repeat(${geo.columns}, var(--slot))`;
    for (const group of bands.get(row)) band.append(groupElement(group, state, geo, marks));
    frag.append(band);
  }
  board.replaceChildren(frag);
}

function groupElement(group, state, geo, marks) {
  const span = geo.spans.get(group.name);
  const el = document.createElement("div");
  el.className = `group group-${group.name}`;
  el.style.gridColumn = `${group.column + 1} / span ${group.per_row * span}`;
  el.style.gridRow = "1"; // groups of one band share its row, whatever their order
  el.style.gridTemplateColumns = `repeat(${group.per_row}, calc(var(--slot) * ${span}))`;
  const piles = groupPiles(state, group.name);
  // Rule options can change a group's size (Penguin's `cells`): the state has the last word.
  for (let i = 0; i < (piles.length || group.count); i++) {
    el.append(pileElement(group, i, piles[i] || [], geo, marks));
  }
  return el;
}

function pileElement(group, index, cards, geo, marks) {
  const ref = pileRef(group.name, index);
  const el = document.createElement("div");
  el.className = `pile fan-${group.fan} group-${group.name}`;
  el.dataset.pile = ref;
  el.dataset.count = String(cards.length);
  el.title = `${group.name} ${index + 1}: ${group.description}`;
  if (!cards.length) el.classList.add("empty");
  if (marks.targets && marks.targets.has(ref)) el.classList.add("target");
  if (marks.hint && marks.hint.to === ref) el.classList.add("hint-to");
  if (marks.hint && marks.hint.from === ref && !marks.hint.count) el.classList.add("hint-from");
  if (marks.actionPiles && marks.actionPiles.has(ref)) el.classList.add("actionable");

  const n = cards.length;
  const width = geo.spans.get(group.name) * geo.slot - geo.gap;
  let shown = [...cards.keys()];
  let dx = 0;
  let dy = 0;
  if (group.fan === "down") {
    dy = n > 1 ? Math.min(FAN_DOWN * geo.ch, ((MAX_PILE_HEIGHTS - 1) * geo.ch) / (n - 1)) : 0;
    el.style.height = `${geo.ch + Math.max(0, n - 1) * dy}px`;
  } else if (group.fan === "right") {
    dx = n > 1 ? Math.min(FAN_RIGHT * geo.cw, (width - geo.cw) / (n - 1)) : 0;
  } else {
    shown = shown.slice(-2); // the top card, and the one under it for when it is dragged away
  }
  el.style.width = `${width}px`;
  const playable = (marks.playable && marks.playable.get(ref)) || new Set();
  for (const i of shown) {
    const card = group.face_down ? backElement() : cardElement(cards[i]);
    const count = n - i;
    card.dataset.pile = ref;
    card.dataset.index = String(i);
    card.style.left = `${i * dx}px`;
    card.style.top = `${group.fan === "down" ? i * dy : 0}px`;
    if (playable.has(count)) card.classList.add("playable");
    if (marks.selected && marks.selected.from === ref && count <= marks.selected.count) card.classList.add("selected");
    if (marks.hint && marks.hint.from === ref && marks.hint.count && count <= marks.hint.count) card.classList.add("hint-from");
    el.append(card);
  }
  if (group.fan === "none" && n > 1) {
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.textContent = String(n);
    el.append(badge);
  }
  return el;
}
