// Drawing cards: the API's two-character codes ("TH") as DOM elements; suits are SVG shapes used as CSS masks.

// One path per suit in a 100x100 box, so the cards need no font with suit glyphs.
const SUIT_PATHS = {
  H: "M50 90C22 68 6 50 6 31 6 16 17 6 30 6c9 0 16 5 20 13 4-8 11-13 20-13 13 0 24 10 24 25 0 19-16 37-44 59z",
  D: "M50 4 86 50 50 96 14 50z",
  S: "M50 5C24 28 7 42 7 59c0 13 10 22 22 22 8 0 14-4 18-10-1 11-5 18-14 24h34c-9-6-13-13-14-24 4 6 10 10 18 10 12 0 22-9 22-22C93 42 76 28 50 5z",
  C: "M50 6c-11 0-20 9-20 20 0 6 2 10 6 14-3-2-6-2-9-2-11 0-20 9-20 20s9 20 20 20c8 0 15-5 18-11-1 11-5 18-13 24h36c-8-6-12-13-13-24 3 6 10 11 18 11 11 0 20-9 20-20s-9-20-20-20c-3 0-6 0-9 2 4-4 6-8 6-14 0-11-9-20-20-20z",
};

export const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANK_NAMES = { A: "Ace", T: "10", J: "Jack", Q: "Queen", K: "King" };

/**
 * Adds one CSS rule per suit, its shape as a mask over the card's text colour: far
 * cheaper to lay out than an SVG element per pip, and still no font needed.
 */
export function installSuitSymbols() {
  if (document.getElementById("suit-symbols")) return;
  const style = document.createElement("style");
  style.id = "suit-symbols";
  style.textContent = Object.entries(SUIT_PATHS)
    .map(([suit, d]) => {
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100"><path d="${d}"/></svg>`;
      return `.suit-${suit} .suit-icon { --suit: url("data:image/svg+xml,${encodeURIComponent(svg)}"); }`;
    })
    .join("\n");
  document.head.append(style);
}

function suitIcon(suit, className) {
  const icon = document.createElement("i");
  icon.className = `suit-icon ${className}`;
  icon.setAttribute("aria-hidden", "true");
  return icon;
}

/** "TH" -> {rank: "T", suit: "H", label: "10", red: true}. */
export function parseCard(code) {
  const rank = code.slice(0, -1).toUpperCase();
  const suit = code.slice(-1).toUpperCase();
  const label = rank === "T" || rank === "10" ? "10" : rank;
  return { rank, suit, label, red: suit === "H" || suit === "D" };
}

/** A face-up card element. */
export function cardElement(code) {
  const { rank, suit, label, red } = parseCard(code);
  const el = document.createElement("div");
  el.className = `card face suit-${suit} ${red ? "red" : "black"}`;
  el.dataset.card = code;
  el.setAttribute("aria-label", `${RANK_NAMES[rank] || rank} of ${SUIT_NAMES[suit]}`);
  for (const corner of ["tl", "br"]) {
    const c = document.createElement("span");
    c.className = `corner ${corner}`;
    const r = document.createElement("b");
    r.textContent = label;
    c.append(r, suitIcon(suit, "corner-suit"));
    el.append(c);
  }
  const middle = document.createElement("span");
  middle.className = "middle";
  if ("JQK".includes(rank)) {
    const letter = document.createElement("b");
    letter.className = "court";
    letter.textContent = rank;
    middle.append(letter, suitIcon(suit, "court-suit"));
  } else {
    middle.append(suitIcon(suit, "pip"));
  }
  el.append(middle);
  return el;
}

/** A face-down card element. */
export function backElement() {
  const el = document.createElement("div");
  el.className = "card back";
  el.setAttribute("aria-label", "face-down card");
  return el;
}
