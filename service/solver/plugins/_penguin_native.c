/* The Penguin family's search, compiled: the same search as penguin.py's
 * PenguinStrategy under search.py's depth_first_pass and best_first, move for move.
 *
 * penguin.py stays the reference: this file ports its candidate moves, their scores
 * and order, its automatic moves, its canonical key and the two passes, and
 * tests/solver/test_penguin_native.py checks on many deals of every preset that both
 * visit the same number of positions and answer the same moves. The rules come in as
 * tables the Python plug-in builds from the engine (relative ranks, tableau parents,
 * what an empty pile takes, the run limits), so no rule is restated here; the score
 * constants below are penguin.py's, and the equivalence tests fail if they drift.
 *
 * Module: service.solver.plugins._penguin_native, one type, Searcher.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "_native_keyset.h"

#define NF 4           /* foundations */
#define NT 7           /* tableau piles */
#define MAXC 10        /* cells, at most (the family's option allows 0-10) */
#define NCARDS 52
#define SLOTS 64       /* every card is below this (cards.py CARD_SLOTS) */
#define MAXMV 24       /* engine moves of one candidate: via the cells, 2 * 11 - 1 at most */
#define MAXSTEP 128    /* engine moves of one step: a candidate and its automatic moves */
#define MAXCAND 256    /* candidates of one position */
#define KEYMAX (NCARDS + NT + MAXC + 2)
_Static_assert(KEYMAX <= KEYSET_KEY_MAX, "a key's length must fit the key set's length byte");

/* Scores of penguin.py (the order candidates are tried in, lowest first). */
enum {
    CELL_ONTO_PARENT = 0, DIG = 5, RUN_ONTO_PARENT_EMPTYING = 10, RUN_ONTO_PARENT = 11,
    RUN_VIA_CELLS_EMPTYING = 20, RUN_VIA_CELLS = 21, RUN_SETTLES_IN_SPACE = 31,
    RUN_VIA_CELLS_INTO_SPACE = 36, PART_RUN_INTO_SPACE = 41, PER_CARD_LEFT = 3,
    RUN_PARKS_IN_SPACE = 45, INTO_CELLS = 70, PER_CELL_CARD = 2, CELL_INTO_SPACE = 72,
    NO_DIG = 99, LAG_WEIGHT = 3, RANK_BELOW_BASE = 12, NO_CARD = -2,
};
enum { RUNS_WHOLE = 0, RUNS_SINGLE = 1, RUNS_LIMIT = 2 };

/* A position. Foundations by height and top card (their cards follow from the top:
 * a foundation builds up in suit from the base); cells (0: free); the tableau piles'
 * cards one after another, pile 0 first, with each pile's length. */
typedef struct {
    uint8_t fl[NF], ft[NF];
    uint8_t cell[MAXC];
    uint8_t tl[NT];
    uint8_t tc[NCARDS];
} Pos;

typedef struct { uint8_t s, d, k; } Mv;   /* pile indexes of the engine's layout */

typedef struct {
    int16_t score;
    uint8_t n;
    Mv mv[MAXMV];
} Cand;

/* ---- the searcher: the rules' tables of one game and base rank -------------------- */
typedef struct {
    PyObject_HEAD
    int f0, c0, t0, nc;
    int runs, any_empty, move_action;
    int8_t rel[SLOTS];      /* relative rank, -1 for non-cards */
    int8_t up[SLOTS];       /* tableau parent = foundation successor, -1 none */
    int8_t down[SLOTS];     /* the card that goes on it in the tableau, NO_CARD none */
    uint8_t empty_takes[SLOTS];
    uint8_t base_cards[NF];
    int lim[MAXC + 1][NT + 1][2]; /* run limits by free cells, empty piles: onto a card, into a space */
} Searcher;

#define SUIT(c) ((c) >> 4)

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int floordiv(int a, int b) { int q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }

static inline void tstarts(const Pos *p, int st[NT + 1]) {
    st[0] = 0;
    for (int t = 0; t < NT; t++) st[t + 1] = st[t] + p->tl[t];
}

static inline int is_won(const Pos *p) { return p->fl[0] + p->fl[1] + p->fl[2] + p->fl[3] == NCARDS; }

/* Top card of cell or tableau pile ``pile`` (0: empty). */
static int top_of(const Searcher *S, const Pos *p, int pile) {
    if (pile < S->t0) return p->cell[pile - S->c0];
    int t = pile - S->t0, end = 0;
    for (int i = 0; i <= t; i++) end += p->tl[i];
    return p->tl[t] ? p->tc[end - 1] : 0;
}

/* Move the top k cards of cell-or-tableau pile s onto cell-or-tableau pile d. */
static void do_move(const Searcher *S, Pos *p, int s, int d, int k) {
    uint8_t buf[NCARDS];
    if (s < S->t0) {
        buf[0] = p->cell[s - S->c0];
        p->cell[s - S->c0] = 0;
    } else {
        int st[NT + 1];
        int t = s - S->t0;
        tstarts(p, st);
        int from = st[t + 1] - k;
        memcpy(buf, p->tc + from, k);
        memmove(p->tc + from, p->tc + st[t + 1], st[NT] - st[t + 1]);
        p->tl[t] -= k;
    }
    if (d < S->t0) {
        p->cell[d - S->c0] = buf[0];
    } else {
        int st[NT + 1];
        int t = d - S->t0;
        tstarts(p, st);
        int at = st[t + 1];
        memmove(p->tc + at + k, p->tc + at, st[NT] - at);
        memcpy(p->tc + at, buf, k);
        p->tl[t] += k;
    }
}

/* Take the top card of cell-or-tableau pile s onto foundation f. */
static void to_foundation(const Searcher *S, Pos *p, int s, int f) {
    uint8_t card;
    if (s < S->t0) {
        card = p->cell[s - S->c0];
        p->cell[s - S->c0] = 0;
    } else {
        int st[NT + 1];
        int t = s - S->t0;
        tstarts(p, st);
        card = p->tc[st[t + 1] - 1];
        memmove(p->tc + st[t + 1] - 1, p->tc + st[t + 1], st[NT] - st[t + 1]);
        p->tl[t]--;
    }
    p->fl[f]++;
    p->ft[f] = card;
}

typedef struct { Mv mv[MAXSTEP]; int n; int overflow; } Step;

static inline void step_add(Step *st, int s, int d, int k) {
    if (st->n < MAXSTEP) st->mv[st->n++] = (Mv){(uint8_t)s, (uint8_t)d, (uint8_t)k};
    else st->overflow = 1;
}

/* penguin.py _needed: card -> foundation that takes it now, and the order the dict
 * would list them in (foundations first, then the base cards). */
static int needed(const Searcher *S, const Pos *p, int8_t need[SLOTS], uint8_t order[NF * 2]) {
    int n = 0, empty = -1, started = 0;
    memset(need, -1, SLOTS);
    for (int f = 0; f < NF; f++) {
        if (p->fl[f]) {
            int top = p->ft[f];
            started |= 1 << SUIT(top);
            int nxt = S->up[top];
            if (nxt >= 0) { need[nxt] = (int8_t)f; order[n++] = (uint8_t)nxt; }
        } else if (empty < 0) {
            empty = f;
        }
    }
    if (empty >= 0)
        for (int i = 0; i < NF; i++) {
            int c = S->base_cards[i];
            if (!(started >> SUIT(c) & 1)) { need[c] = (int8_t)empty; order[n++] = (uint8_t)c; }
        }
    return n;
}

/* penguin.py _home: every safe move to the foundations, to a fixpoint, in its order. */
static void home(const Searcher *S, Pos *p, Step *step) {
    int8_t need[SLOTS];
    int8_t at[SLOTS];
    uint8_t order[NF * 2];
    uint8_t ready[NCARDS + 8];
    int nready = 0;
    int norder = needed(S, p, need, order);
    memset(at, -1, sizeof at);
    for (int i = 0; i < S->nc; i++)
        if (p->cell[i]) at[p->cell[i]] = (int8_t)(S->c0 + i);
    {
        int end = 0;
        for (int t = 0; t < NT; t++) {
            end += p->tl[t];
            if (p->tl[t]) at[p->tc[end - 1]] = (int8_t)(S->t0 + t);
        }
    }
    for (int i = 0; i < norder; i++)
        if (at[order[i]] >= 0) ready[nready++] = order[i];
    while (nready) {
        int card = ready[--nready];
        int s = at[card], f = need[card];
        at[card] = -1;
        need[card] = -1;
        to_foundation(S, p, s, f);
        step_add(step, s, S->f0 + f, 1);
        int top = top_of(S, p, s);
        if (top) {
            at[top] = (int8_t)s;
            if (need[top] >= 0) ready[nready++] = (uint8_t)top;
        }
        int is_base = 0;
        for (int i = 0; i < NF; i++) is_base |= S->base_cards[i] == card;
        if (is_base) {
            norder = needed(S, p, need, order);
            nready = 0;
            for (int i = 0; i < norder; i++)
                if (at[order[i]] >= 0) ready[nready++] = order[i];
            continue;
        }
        int nxt = S->up[card];
        if (nxt >= 0) {
            need[nxt] = (int8_t)f;
            if (at[nxt] >= 0) ready[nready++] = (uint8_t)nxt;
        }
    }
}

/* penguin.py _join: every cell card whose tableau parent is a top card goes onto it. */
static int join(const Searcher *S, Pos *p, Step *step) {
    int8_t waiting[SLOTS];
    int any = 0, moved = 0;
    memset(waiting, -1, sizeof waiting);
    for (int i = 0; i < S->nc; i++) {
        int x = p->cell[i];
        if (x && S->up[x] >= 0) { waiting[S->up[x]] = (int8_t)(S->c0 + i); any = 1; }
    }
    if (!any) return 0;
    for (int t = 0; t < NT; t++) {
        if (!p->tl[t]) continue;
        int top = top_of(S, p, S->t0 + t);
        int c = waiting[top];
        waiting[top] = -1;
        while (c >= 0) {
            int x = p->cell[c - S->c0];
            do_move(S, p, c, S->t0 + t, 1);
            step_add(step, c, S->t0 + t, 1);
            moved = 1;
            c = waiting[x];
            waiting[x] = -1;
        }
    }
    return moved;
}

static void autoplay(const Searcher *S, Pos *p, Step *step) {
    home(S, p, step);
    join(S, p, step);
}

/* ---- candidates (penguin.py _tableau_candidates, _cell_candidates) ----------------- */
typedef struct {
    int t;              /* pile index */
    int n, k;           /* the pile's length, its top run's length */
    const uint8_t *cards;
    int run_bottom, dig[4], cell_score, top_rel, top_suit, fits_top;
} Entry;

typedef struct {
    Cand *c;
    int n, overflow;
} Cands;

static inline Cand *cand_new(Cands *cs, int score) {
    if (cs->n >= MAXCAND) { cs->overflow = 1; return NULL; }
    Cand *c = &cs->c[cs->n++];
    c->score = (int16_t)score;
    c->n = 0;
    return c;
}
static inline void cand_mv(Cand *c, int s, int d, int k) {
    if (c && c->n < MAXMV) c->mv[c->n++] = (Mv){(uint8_t)s, (uint8_t)d, (uint8_t)k};
}

static void via_cells(Cand *c, int s, int t, int k, const int *free_cells) {
    for (int i = 0; i < k - 1; i++) cand_mv(c, s, free_cells[i], 1);
    cand_mv(c, s, t, 1);
    for (int i = k - 2; i >= 0; i--) cand_mv(c, free_cells[i], t, 1);
}

static void pile_info(const Searcher *S, Entry *e) {
    const uint8_t *pile = e->cards;
    int n = e->n, k = 1;
    while (k < n && S->up[pile[n - k]] == pile[n - k - 1]) k++;
    int below = n - k;
    for (int s = 0; s < 4; s++) e->dig[s] = NO_DIG + 13 * LAG_WEIGHT;
    for (int i = 0; i < below; i++) {
        int c = pile[i];
        int v = LAG_WEIGHT * S->rel[c] + below - i;
        if (v < e->dig[SUIT(c)]) e->dig[SUIT(c)] = v;
    }
    int top = pile[n - 1];
    e->k = k;
    e->run_bottom = pile[below];
    e->cell_score = k > 1 ? INTO_CELLS + (k < n) + PER_CELL_CARD * k : INTO_CELLS + (n > 1);
    e->top_rel = S->rel[top];
    e->top_suit = SUIT(top);
    e->fits_top = S->down[top];
}

/* Every candidate of position p, sorted (stably) by score; returns how many.
 * penguin.py lists the moves into the cells only once the others did not win; listing
 * them at once and sorting everything stably gives the same order (every move into the
 * cells scores at least INTO_CELLS, and stage one's own were sorted before them). */
static int candidates(const Searcher *S, const Pos *p, const int nxt[4], Cands *cs) {
    Entry entries[NT];
    int nent = 0;
    int8_t unit_at[SLOTS];
    int free_cells[MAXC], nfree = 0;
    int empty_pile = -1, nempty = 0;
    memset(unit_at, -1, sizeof unit_at);
    int start = 0;
    for (int t = 0; t < NT; t++) {
        int n = p->tl[t];
        if (!n) {
            nempty++;
            if (empty_pile < 0) empty_pile = S->t0 + t;
            continue;
        }
        Entry *e = &entries[nent++];
        e->t = S->t0 + t;
        e->n = n;
        e->cards = p->tc + start;
        pile_info(S, e);
        unit_at[e->run_bottom] = (int8_t)e->t;
        start += n;
    }
    for (int i = 0; i < S->nc; i++) {
        if (p->cell[i]) unit_at[p->cell[i]] = (int8_t)(S->c0 + i);
        else free_cells[nfree++] = S->c0 + i;
    }
    int lim_onto = S->lim[nfree][nempty][0], lim_empty = S->lim[nfree][nempty][1];
    int single = S->runs == RUNS_SINGLE, whole = S->runs == RUNS_WHOLE;
    uint64_t fits = 0; /* piles and cells whose unit fits some top */

    /* _onto_tableau */
    for (int i = 0; i < nent; i++) {
        Entry *e = &entries[i];
        int s = e->fits_top >= 0 ? unit_at[e->fits_top] : -1;
        if (s < 0) continue;
        fits |= 1ull << s;
        if (s < S->t0) {
            cand_mv(cand_new(cs, CELL_ONTO_PARENT), s, e->t, 1);
            continue;
        }
        if (s == e->t) continue;
        const Entry *src = NULL;
        for (int j = 0; j < nent; j++) if (entries[j].t == s) src = &entries[j];
        int k = src->k;
        if (k <= lim_onto) {
            cand_mv(cand_new(cs, k < src->n ? RUN_ONTO_PARENT : RUN_ONTO_PARENT_EMPTYING), s, e->t, k);
        } else if (single && k - 1 <= nfree) {
            via_cells(cand_new(cs, k < src->n ? RUN_VIA_CELLS : RUN_VIA_CELLS_EMPTYING), s, e->t, k, free_cells);
        }
    }
    /* _dig */
    if (nfree > 1) {
        for (int i = 0; i < nent; i++) {
            const Entry *e = &entries[i];
            int n = e->n, top = nfree < n - 1 ? nfree : n - 1;
            for (int d = 2; d <= top; d++) {
                int c = e->cards[n - 1 - d];
                if (S->rel[c] == nxt[SUIT(c)]) {
                    Cand *cd = cand_new(cs, DIG + d);
                    for (int j = 0; j < d; j++) cand_mv(cd, e->t, free_cells[j], 1);
                    break;
                }
            }
        }
    }
    /* _into_space */
    if (empty_pile >= 0) {
        int space = empty_pile;
        for (int i = 0; i < S->nc; i++) {
            int card = p->cell[i];
            if (card && S->empty_takes[card])
                cand_mv(cand_new(cs, CELL_INTO_SPACE - S->rel[card]), S->c0 + i, space, 1);
        }
        for (int i = 0; i < nent; i++) {
            const Entry *e = &entries[i];
            int n = e->n, r = e->k, s = e->t;
            if (r == n && (whole || !S->any_empty)) continue;
            if (S->any_empty) {
                if (whole) {
                    int settles = S->rel[e->cards[n - r]] == RANK_BELOW_BASE;
                    cand_mv(cand_new(cs, settles ? RUN_SETTLES_IN_SPACE : RUN_PARKS_IN_SPACE), s, space, r);
                } else {
                    int hi = r < lim_empty ? r : lim_empty;
                    if (n - 1 < hi) hi = n - 1;
                    for (int k = hi; k > 0; k--)
                        cand_mv(cand_new(cs, PART_RUN_INTO_SPACE + (r - k) * PER_CARD_LEFT), s, space, k);
                    if (single && 1 < r && r < n && r - 1 <= nfree)
                        via_cells(cand_new(cs, RUN_VIA_CELLS_INTO_SPACE), s, space, r, free_cells);
                }
            } else if (S->empty_takes[e->cards[n - r]]) {
                if (r <= lim_empty) cand_mv(cand_new(cs, RUN_SETTLES_IN_SPACE), s, space, r);
                else if (single && r - 1 <= nfree) via_cells(cand_new(cs, RUN_SETTLES_IN_SPACE), s, space, r, free_cells);
            }
        }
    }
    /* _cell_candidates */
    if (nfree) {
        int c0 = free_cells[0];
        int n0 = LAG_WEIGHT * nxt[0], n1 = LAG_WEIGHT * nxt[1], n2 = LAG_WEIGHT * nxt[2], n3 = LAG_WEIGHT * nxt[3];
        for (int i = 0; i < nent; i++) {
            const Entry *e = &entries[i];
            if (fits >> e->t & 1) continue;
            int m = NO_DIG;
            if (e->dig[0] - n0 < m) m = e->dig[0] - n0;
            if (e->dig[1] - n1 < m) m = e->dig[1] - n1;
            if (e->dig[2] - n2 < m) m = e->dig[2] - n2;
            if (e->dig[3] - n3 < m) m = e->dig[3] - n3;
            int dig = floordiv(m, 2);
            int r = e->k;
            if (r > 1) {
                if (r <= nfree) {
                    Cand *cd = cand_new(cs, e->cell_score + dig);
                    for (int j = 0; j < r; j++) cand_mv(cd, e->t, free_cells[j], 1);
                }
                continue;
            }
            cand_mv(cand_new(cs, e->cell_score + floordiv(e->top_rel - nxt[e->top_suit], 3) + dig), e->t, c0, 1);
        }
    }
    /* a stable sort by score (Python's list.sort) */
    for (int i = 1; i < cs->n; i++) {
        if (cs->c[i].score >= cs->c[i - 1].score) continue;
        Cand x = cs->c[i];
        int j = i - 1;
        while (j >= 0 && cs->c[j].score > x.score) { cs->c[j + 1] = cs->c[j]; j--; }
        cs->c[j + 1] = x;
    }
    return cs->n;
}

/* penguin.py _next_wanted */
static void next_wanted(const Searcher *S, const Pos *p, int nxt[4]) {
    nxt[0] = nxt[1] = nxt[2] = nxt[3] = 0;
    for (int f = 0; f < NF; f++)
        if (p->fl[f]) nxt[SUIT(p->ft[f])] = S->rel[p->ft[f]] + 1;
}

/* Parents of the cells' cards, as a bit set of cards (penguin.py children's wanted_tops). */
static uint64_t wanted_tops(const Searcher *S, const Pos *p) {
    uint64_t w = 0;
    int used = 0;
    for (int i = 0; i < S->nc; i++) used += p->cell[i] != 0;
    if (used == 0) return 0;
    for (int i = 0; i < S->nc; i++)
        if (p->cell[i] && S->up[p->cell[i]] >= 0) w |= 1ull << S->up[p->cell[i]];
    return w;
}

/* penguin.py _build: the child of one candidate, after its automatic moves. */
static void build(const Searcher *S, const Pos *parent, const Cand *c, const int nxt[4], uint64_t wanted,
                  Pos *child, Step *step) {
    *child = *parent;
    step->n = 0;
    step->overflow = 0;
    for (int i = 0; i < c->n; i++) {
        do_move(S, child, c->mv[i].s, c->mv[i].d, c->mv[i].k);
        step_add(step, c->mv[i].s, c->mv[i].d, c->mv[i].k);
    }
    int src = c->mv[0].s;
    int sp = top_of(S, child, src);
    if (sp && S->rel[sp] == nxt[SUIT(sp)]) {
        autoplay(S, child, step);
    } else if (wanted) {
        int moved_top = top_of(S, parent, src);
        if (c->n > 1 || (sp && (wanted >> sp & 1)) || (wanted >> moved_top & 1)) join(S, child, step);
    }
}

/* penguin.py key: the sorted tableau piles (each ended by a 0 byte: no card is 0), then
 * the sorted cards of the cells. Returns its length. */
static int make_key(const Searcher *S, const Pos *p, uint8_t *key) {
    int st[NT + 1], order[NT];
    tstarts(p, st);
    for (int t = 0; t < NT; t++) {
        int j = t;
        while (j > 0) {
            int a = order[j - 1], la = p->tl[a], lt = p->tl[t];
            int m = memcmp(p->tc + st[a], p->tc + st[t], la < lt ? la : lt);
            if (m < 0 || (m == 0 && la <= lt)) break;
            order[j] = a;
            j--;
        }
        order[j] = t;
    }
    int n = 0;
    for (int i = 0; i < NT; i++) {
        int t = order[i];
        memcpy(key + n, p->tc + st[t], p->tl[t]);
        n += p->tl[t];
        key[n++] = 0;
    }
    uint8_t cells[MAXC];
    int nc = 0;
    for (int i = 0; i < S->nc; i++) {
        int x = p->cell[i];
        if (!x) continue;
        int j = nc++;
        while (j > 0 && cells[j - 1] > x) { cells[j] = cells[j - 1]; j--; }
        cells[j] = (uint8_t)x;
    }
    memcpy(key + n, cells, nc);
    return n + nc;
}

/* penguin.py score (best-first): lower is better. */
static int score(const Searcher *S, const Pos *p) {
    int home = p->fl[0] + p->fl[1] + p->fl[2] + p->fl[3], cells = 0, breaks = 0, spaces = 0;
    for (int i = 0; i < S->nc; i++) cells += p->cell[i] != 0;
    int start = 0;
    for (int t = 0; t < NT; t++) {
        int n = p->tl[t];
        if (!n) { spaces++; continue; }
        int prev = -1;
        for (int i = 0; i < n; i++) {
            int c = p->tc[start + i];
            if (prev < 0 || S->down[prev] != c) breaks++;
            prev = c;
        }
        start += n;
    }
    return -5 * home + cells + breaks - 2 * spaces;
}

/* ---- the passes --------------------------------------------------------------------- */
enum Outcome { SOLVED, UNSOLVABLE, UNKNOWN, NO_MEMORY, TOO_BIG };
enum Stop { STOP_NONE, STOP_TIME, STOP_STATES, STOP_MEMORY, STOP_DEPTH };

typedef struct {
    Pos pos;
    int nxt[4];
    uint64_t wanted;
    size_t cand_begin, cand_end, next;
    size_t step_begin, step_len; /* the moves that led here, in the steps vector */
} Frame;

typedef struct {
    enum Outcome outcome;
    enum Stop stop;
    size_t states;
    Vec steps;      /* Mv: the moves of every step of the solution, one after another */
    Vec step_lens;  /* int: how many moves each step has */
    Vec nodes;      /* Pos: the positions the solution runs through (depth-first, when long) */
} Result;

static void result_init(Result *r) {
    memset(r, 0, sizeof *r);
    r->steps.size = sizeof(Mv);
    r->step_lens.size = sizeof(int);
    r->nodes.size = sizeof(Pos);
}
static void result_free(Result *r) {
    vec_free(&r->steps);
    vec_free(&r->step_lens);
    vec_free(&r->nodes);
}

static int push_step(Result *r, const Mv *mv, int n) {
    if (vec_reserve(&r->steps, n) || vec_reserve(&r->step_lens, 1)) return -1;
    memcpy((Mv *)r->steps.p + r->steps.len, mv, n * sizeof(Mv));
    r->steps.len += n;
    ((int *)r->step_lens.p)[r->step_lens.len++] = n;
    return 0;
}

static int expand(const Searcher *S, Frame *f, Vec *cands) {
    Cand local[MAXCAND];
    Cands cs = {local, 0, 0};
    next_wanted(S, &f->pos, f->nxt);
    f->wanted = wanted_tops(S, &f->pos);
    candidates(S, &f->pos, f->nxt, &cs);
    if (cs.overflow) return -2;
    if (vec_reserve(cands, cs.n)) return -1;
    f->cand_begin = cands->len;
    memcpy((Cand *)cands->p + cands->len, local, cs.n * sizeof(Cand));
    cands->len += cs.n;
    f->cand_end = cands->len;
    f->next = f->cand_begin;
    return 0;
}

/* The child of candidate c of parent, after its automatic moves, added to the visited set
 * (both passes, as search.py's: the clock is read every 128 children). Returns 1 when the
 * child is new, 0 when it was seen, -1 when the pass must stop (res says why). */
static int visit_child(const Searcher *S, const Pos *parent, const Cand *c, const int nxt[4], uint64_t wanted,
                       KeySet *vis, unsigned *tick, double deadline, Pos *child, Step *step, Result *res) {
    uint8_t key[KEYMAX];
    build(S, parent, c, nxt, wanted, child, step);
    if (step->overflow) {
        res->outcome = TOO_BIG;
        return -1;
    }
    if ((++*tick & 127) == 0 && now() > deadline) {
        res->outcome = UNKNOWN;
        res->stop = STOP_TIME;
        return -1;
    }
    uint32_t id;
    int added = keyset_add(vis, key, (size_t)make_key(S, child, key), &id);
    if (added < 0) res->outcome = NO_MEMORY;
    return added;
}

/* search.py depth_first_pass, on compiled positions. */
static void depth_first(const Searcher *S, const Pos *root, double deadline, size_t max_states, size_t depth_cap,
                        size_t long_path, Result *res) {
    KeySet vis;
    Vec frames = {NULL, 0, 0, sizeof(Frame)}, cands = {NULL, 0, 0, sizeof(Cand)}, moves = {NULL, 0, 0, sizeof(Mv)};
    uint8_t key[KEYMAX];
    unsigned tick = 0;
    int cut = 0;
    res->outcome = NO_MEMORY;
    if (keyset_init(&vis, 1024)) return;
    uint32_t root_id;
    if (keyset_add(&vis, key, (size_t)make_key(S, root, key), &root_id) < 0 || vec_reserve(&frames, 1)) goto out;
    {
        Frame *f = (Frame *)frames.p;
        f->pos = *root;
        f->step_begin = f->step_len = 0;
        int e = expand(S, f, &cands);
        if (e) { res->outcome = e == -2 ? TOO_BIG : NO_MEMORY; goto out; }
        frames.len = 1;
    }
    while (frames.len) {
        Frame *f = (Frame *)frames.p + frames.len - 1;
        if (f->next == f->cand_end) {
            cands.len = f->cand_begin;
            moves.len = f->step_begin;
            frames.len--;
            continue;
        }
        Step step;
        Pos child;
        const Cand *c = (Cand *)cands.p + f->next++;
        int added = visit_child(S, &f->pos, c, f->nxt, f->wanted, &vis, &tick, deadline, &child, &step, res);
        if (added < 0) goto out;
        if (!added) continue;
        if (is_won(&child)) {
            Frame *fs = (Frame *)frames.p;
            for (size_t i = 1; i < frames.len; i++)
                if (push_step(res, (Mv *)moves.p + fs[i].step_begin, (int)fs[i].step_len)) goto out;
            if (push_step(res, step.mv, step.n)) goto out;
            if (frames.len + 1 > long_path) {
                if (vec_reserve(&res->nodes, frames.len + 1)) goto out;
                for (size_t i = 0; i < frames.len; i++) ((Pos *)res->nodes.p)[i] = fs[i].pos;
                ((Pos *)res->nodes.p)[frames.len] = child;
                res->nodes.len = frames.len + 1;
            }
            res->outcome = SOLVED;
            goto out;
        }
        if (keyset_count(&vis) >= max_states) {
            res->outcome = UNKNOWN;
            res->stop = STOP_STATES;
            goto out;
        }
        if (frames.len >= depth_cap) {
            cut = 1;
            keyset_drop_last(&vis);
            continue;
        }
        if (vec_reserve(&frames, 1) || vec_reserve(&moves, step.n)) goto out;
        f = (Frame *)frames.p + frames.len;
        f->pos = child;
        f->step_begin = moves.len;
        f->step_len = step.n;
        memcpy((Mv *)moves.p + moves.len, step.mv, step.n * sizeof(Mv));
        moves.len += step.n;
        int e = expand(S, f, &cands);
        if (e) { res->outcome = e == -2 ? TOO_BIG : NO_MEMORY; goto out; }
        frames.len++;
    }
    res->outcome = cut ? UNKNOWN : UNSOLVABLE;
    res->stop = cut ? STOP_DEPTH : STOP_NONE;
out:
    res->states = keyset_count(&vis);
    keyset_free(&vis);
    vec_free(&frames);
    vec_free(&cands);
    vec_free(&moves);
}

/* Best-first: an open position waits in a binary heap ordered by (score, count). */
typedef struct { int score; uint32_t count, id; Pos pos; } Open;

static inline int open_less(const Open *a, const Open *b) {
    return a->score < b->score || (a->score == b->score && a->count < b->count);
}

static void heap_up(Open *h, size_t i) {
    Open x = h[i];
    while (i) {
        size_t p = (i - 1) / 2;
        if (!open_less(&x, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

static void heap_down(Open *h, size_t n, size_t i) {
    Open x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && open_less(&h[c + 1], &h[c])) c++;
        if (!open_less(&h[c], &x)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static int open_cmp(const void *a, const void *b) {
    return open_less(a, b) ? -1 : open_less(b, a) ? 1 : 0;
}

/* search.py best_first, on compiled positions. Each visited key's id records its
 * parent's id and the moves from it. */
static void best_first(const Searcher *S, const Pos *root, double deadline, size_t max_states, size_t max_open,
                       Result *res) {
    KeySet vis;
    Vec heap = {NULL, 0, 0, sizeof(Open)}, parent = {NULL, 0, 0, sizeof(uint32_t)},
        step_at = {NULL, 0, 0, sizeof(uint64_t)}, moves = {NULL, 0, 0, sizeof(Mv)};
    Cand local[MAXCAND];
    uint8_t key[KEYMAX];
    unsigned tick = 0;
    uint32_t count = 0;
    int pruned = 0;
    res->outcome = NO_MEMORY;
    if (keyset_init(&vis, 1024)) return;
    uint32_t root_id;
    if (keyset_add(&vis, key, (size_t)make_key(S, root, key), &root_id) < 0) goto out;
    if (vec_reserve(&heap, 1) || vec_reserve(&parent, 1) || vec_reserve(&step_at, 1)) goto out;
    ((uint32_t *)parent.p)[parent.len++] = UINT32_MAX;
    ((uint64_t *)step_at.p)[step_at.len++] = 0;
    {
        Open *o = (Open *)heap.p;
        o->score = score(S, root);
        o->count = 0;
        o->id = 0;
        o->pos = *root;
        heap.len = 1;
    }
    while (heap.len) {
        Open *h = (Open *)heap.p;
        if (heap.len > max_open) {
            qsort(h, heap.len, sizeof(Open), open_cmp);
            heap.len = max_open / 2;  /* a sorted array is a heap */
            pruned = 1;
        }
        Open cur = h[0];
        h[0] = h[--heap.len];
        if (heap.len) heap_down(h, heap.len, 0);
        int nxt[4];
        Cands cs = {local, 0, 0};
        next_wanted(S, &cur.pos, nxt);
        uint64_t wanted = wanted_tops(S, &cur.pos);
        candidates(S, &cur.pos, nxt, &cs);
        if (cs.overflow) { res->outcome = TOO_BIG; goto out; }
        for (int i = 0; i < cs.n; i++) {
            Step step;
            Pos child;
            int added = visit_child(S, &cur.pos, &local[i], nxt, wanted, &vis, &tick, deadline, &child, &step, res);
            if (added < 0) goto out;
            if (!added) continue;
            if (vec_reserve(&parent, 1) || vec_reserve(&step_at, 1) || vec_reserve(&moves, step.n)) goto out;
            ((uint32_t *)parent.p)[parent.len++] = cur.id;
            ((uint64_t *)step_at.p)[step_at.len++] = (uint64_t)moves.len << 8 | (uint64_t)step.n;
            memcpy((Mv *)moves.p + moves.len, step.mv, step.n * sizeof(Mv));
            moves.len += step.n;
            uint32_t id = (uint32_t)keyset_count(&vis) - 1;
            if (is_won(&child)) {
                /* the chain of steps back to the root, then in order */
                size_t n = 0;
                for (uint32_t c = id; c != 0; c = ((uint32_t *)parent.p)[c]) n++;
                uint32_t *chain = malloc(n * sizeof(uint32_t));
                if (!chain) goto out;
                size_t j = n;
                for (uint32_t c = id; c != 0; c = ((uint32_t *)parent.p)[c]) chain[--j] = c;
                for (j = 0; j < n; j++) {
                    uint64_t at = ((uint64_t *)step_at.p)[chain[j]];
                    if (push_step(res, (Mv *)moves.p + (at >> 8), (int)(at & 255))) { free(chain); goto out; }
                }
                free(chain);
                res->outcome = SOLVED;
                goto out;
            }
            if (keyset_count(&vis) >= max_states) {
                res->outcome = UNKNOWN;
                res->stop = STOP_STATES;
                goto out;
            }
            count++;
            if (vec_reserve(&heap, 1)) goto out;
            Open *o = (Open *)heap.p + heap.len;
            o->score = score(S, &child);
            o->count = count;
            o->id = id;
            o->pos = child;
            heap.len++;
            heap_up((Open *)heap.p, heap.len - 1);
        }
    }
    res->outcome = pruned ? UNKNOWN : UNSOLVABLE;
    res->stop = pruned ? STOP_MEMORY : STOP_NONE;
out:
    res->states = keyset_count(&vis);
    keyset_free(&vis);
    vec_free(&heap);
    vec_free(&parent);
    vec_free(&step_at);
    vec_free(&moves);
}

/* ---- Python glue -------------------------------------------------------------------- */
static int read_table(PyObject *obj, const char *name, uint8_t *out) {
    Py_buffer b;
    if (PyObject_GetBuffer(obj, &b, PyBUF_SIMPLE)) return -1;
    if (b.len != SLOTS) {
        PyBuffer_Release(&b);
        PyErr_Format(PyExc_ValueError, "%s: a table of %d bytes, one per card slot", name, SLOTS);
        return -1;
    }
    memcpy(out, b.buf, SLOTS);
    PyBuffer_Release(&b);
    return 0;
}

static int Searcher_init(Searcher *self, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"layout", "rel", "up", "down", "empty_takes", "base_cards", "run_limits", "runs",
                         "any_empty", "move_action", NULL};
    PyObject *rel, *up, *down, *empty, *base, *limits;
    int f0, c0, t0, nc;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "(iiii)OOOOOOipi", kw, &f0, &c0, &t0, &nc, &rel, &up, &down, &empty,
                                     &base, &limits, &self->runs, &self->any_empty, &self->move_action))
        return -1;
    if (nc < 0 || nc > MAXC || c0 != f0 + NF || t0 != c0 + nc || t0 + NT > 255) {
        PyErr_SetString(PyExc_ValueError, "layout: 4 foundations, then the cells (0-10), then 7 tableau piles");
        return -1;
    }
    self->f0 = f0; self->c0 = c0; self->t0 = t0; self->nc = nc;
    if (read_table(rel, "rel", (uint8_t *)self->rel) || read_table(up, "up", (uint8_t *)self->up) ||
        read_table(down, "down", (uint8_t *)self->down) || read_table(empty, "empty_takes", self->empty_takes))
        return -1;
    Py_buffer b;
    if (PyObject_GetBuffer(base, &b, PyBUF_SIMPLE)) return -1;
    if (b.len != NF) { PyBuffer_Release(&b); PyErr_SetString(PyExc_ValueError, "base_cards: 4 cards"); return -1; }
    memcpy(self->base_cards, b.buf, NF);
    PyBuffer_Release(&b);
    PyObject *seq = PySequence_Fast(limits, "run_limits: a sequence");
    if (!seq) return -1;
    Py_ssize_t want = (Py_ssize_t)(nc + 1) * (NT + 1) * 2;
    if (PySequence_Fast_GET_SIZE(seq) != want) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "run_limits: %zd ints (free cells x empty piles x onto/into)", want);
        return -1;
    }
    for (Py_ssize_t i = 0; i < want; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(seq); return -1; }
        self->lim[i / ((NT + 1) * 2)][i / 2 % (NT + 1)][i % 2] = (int)v;
    }
    Py_DECREF(seq);
    return 0;
}

static int read_root(const Searcher *S, PyObject *piles, Pos *p) {
    memset(p, 0, sizeof *p);
    if (!PyTuple_Check(piles) || PyTuple_GET_SIZE(piles) != S->t0 + NT) {
        PyErr_SetString(PyExc_ValueError, "root: a tuple of bytes, one per pile");
        return -1;
    }
    int total = 0, used = 0;
    for (int i = 0; i < S->t0 + NT; i++) {
        PyObject *b = PyTuple_GET_ITEM(piles, i);
        if (!PyBytes_Check(b)) { PyErr_SetString(PyExc_TypeError, "root: piles are bytes"); return -1; }
        const uint8_t *c = (const uint8_t *)PyBytes_AS_STRING(b);
        Py_ssize_t n = PyBytes_GET_SIZE(b);
        total += (int)n;
        if (total > NCARDS) break;
        for (Py_ssize_t j = 0; j < n; j++)
            if (c[j] == 0 || c[j] >= SLOTS || S->rel[c[j]] < 0) { total = NCARDS + 1; break; }
        if (i < S->c0) {
            if (n > NCARDS / NF) total = NCARDS + 1;
            p->fl[i - S->f0] = (uint8_t)n;
            p->ft[i - S->f0] = n ? c[n - 1] : 0;
        } else if (i < S->t0) {
            if (n > 1) total = NCARDS + 1;
            p->cell[i - S->c0] = n ? c[0] : 0;
        } else {
            p->tl[i - S->t0] = (uint8_t)n;
            memcpy(p->tc + used, c, n);
            used += (int)n;
        }
    }
    if (total != NCARDS) { PyErr_SetString(PyExc_ValueError, "root: not a position of one deck"); return -1; }
    return 0;
}

static PyObject *pos_to_piles(const Searcher *S, const Pos *p) {
    PyObject *t = PyTuple_New(S->t0 + NT);
    if (!t) return NULL;
    for (int f = 0; f < NF; f++) {
        uint8_t cards[13];
        int n = p->fl[f], c = p->ft[f];
        for (int i = n - 1; i >= 0; i--) { cards[i] = (uint8_t)c; c = S->down[c]; }
        PyTuple_SET_ITEM(t, S->f0 + f, PyBytes_FromStringAndSize((const char *)cards, n));
    }
    for (int i = 0; i < S->nc; i++)
        PyTuple_SET_ITEM(t, S->c0 + i, PyBytes_FromStringAndSize((const char *)&p->cell[i], p->cell[i] ? 1 : 0));
    int start = 0;
    for (int i = 0; i < NT; i++) {
        PyTuple_SET_ITEM(t, S->t0 + i, PyBytes_FromStringAndSize((const char *)p->tc + start, p->tl[i]));
        start += p->tl[i];
    }
    for (int i = 0; i < S->t0 + NT; i++)
        if (!PyTuple_GET_ITEM(t, i)) { Py_DECREF(t); return NULL; }
    return t;
}

static const char *OUTCOMES[] = {"solved", "unsolvable", "unknown"};
static const char *STOPS[] = {NULL, "time", "states", "memory", "depth"};

/* (outcome, stopped_by or None, states, steps, nodes or None): the values of search.py's
 * Outcome and StopReason, the steps as tuples of (action, src, dst, count) moves. */
static PyObject *answer(const Searcher *S, Result *r) {
    if (r->outcome == NO_MEMORY) return PyErr_NoMemory();
    if (r->outcome == TOO_BIG) {
        PyErr_SetString(PyExc_ValueError, "a position outgrew the compiled search's fixed bounds");
        return NULL;
    }
    PyObject *steps = PyList_New((Py_ssize_t)r->step_lens.len);
    if (!steps) return NULL;
    const Mv *mv = (const Mv *)r->steps.p;
    for (size_t i = 0; i < r->step_lens.len; i++) {
        int n = ((int *)r->step_lens.p)[i];
        PyObject *st = PyTuple_New(n);
        if (!st) { Py_DECREF(steps); return NULL; }
        for (int j = 0; j < n; j++, mv++) {
            PyObject *m = Py_BuildValue("(iiii)", S->move_action, mv->s, mv->d, mv->k);
            if (!m) { Py_DECREF(st); Py_DECREF(steps); return NULL; }
            PyTuple_SET_ITEM(st, j, m);
        }
        PyList_SET_ITEM(steps, i, st);
    }
    PyObject *nodes = Py_None;
    Py_INCREF(nodes);
    if (r->nodes.len) {
        Py_DECREF(nodes);
        nodes = PyList_New((Py_ssize_t)r->nodes.len);
        if (!nodes) { Py_DECREF(steps); return NULL; }
        for (size_t i = 0; i < r->nodes.len; i++) {
            PyObject *t = pos_to_piles(S, (Pos *)r->nodes.p + i);
            if (!t) { Py_DECREF(nodes); Py_DECREF(steps); return NULL; }
            PyList_SET_ITEM(nodes, i, t);
        }
    }
    PyObject *stop = r->stop == STOP_NONE ? Py_None : PyUnicode_FromString(STOPS[r->stop]);
    if (r->stop == STOP_NONE) Py_INCREF(stop);
    return Py_BuildValue("(sNnNN)", OUTCOMES[r->outcome], stop, (Py_ssize_t)r->states, steps, nodes);
}

static PyObject *Searcher_depth_first(Searcher *self, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"root", "deadline", "max_states", "max_depth", "long_path", NULL};
    PyObject *root;
    double deadline;
    Py_ssize_t max_states, max_depth, long_path;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Odnnn", kw, &root, &deadline, &max_states, &max_depth, &long_path))
        return NULL;
    Pos p;
    if (read_root(self, root, &p)) return NULL;
    Result r;
    result_init(&r);
    size_t cap = max_depth > 0 ? (size_t)max_depth : SIZE_MAX;
    Py_BEGIN_ALLOW_THREADS
    depth_first(self, &p, deadline, max_states > 1 ? (size_t)max_states : 1, cap, (size_t)long_path, &r);
    Py_END_ALLOW_THREADS
    PyObject *out = answer(self, &r);
    result_free(&r);
    return out;
}

static PyObject *Searcher_best_first(Searcher *self, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"root", "deadline", "max_states", "max_open", NULL};
    PyObject *root;
    double deadline;
    Py_ssize_t max_states, max_open;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Odnn", kw, &root, &deadline, &max_states, &max_open)) return NULL;
    Pos p;
    if (read_root(self, root, &p)) return NULL;
    Result r;
    result_init(&r);
    Py_BEGIN_ALLOW_THREADS
    best_first(self, &p, deadline, max_states > 1 ? (size_t)max_states : 1, max_open > 2 ? (size_t)max_open : 2, &r);
    Py_END_ALLOW_THREADS
    PyObject *out = answer(self, &r);
    result_free(&r);
    return out;
}

static PyMethodDef Searcher_methods[] = {
    {"depth_first", (PyCFunction)(void (*)(void))Searcher_depth_first, METH_VARARGS | METH_KEYWORDS,
     "depth_first(root, deadline, max_states, max_depth, long_path): search.py's depth_first_pass "
     "(max_depth 0: no bound); the nodes of a solution through more than long_path positions come back too."},
    {"best_first", (PyCFunction)(void (*)(void))Searcher_best_first, METH_VARARGS | METH_KEYWORDS,
     "best_first(root, deadline, max_states, max_open): search.py's best_first."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SearcherType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "service.solver.plugins._penguin_native.Searcher",
    .tp_basicsize = sizeof(Searcher),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The Penguin family's compiled search for one game and base rank (tables from penguin.py).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Searcher_init,
    .tp_methods = Searcher_methods,
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_penguin_native",
    "The Penguin family's search, compiled (penguin.py's PenguinStrategy is the reference).", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__penguin_native(void) {
    PyObject *m = PyModule_Create(&moduledef);
    if (m && PyModule_AddType(m, &SearcherType) < 0) Py_CLEAR(m); /* readies the type, adds it as "Searcher" */
    return m;
}
