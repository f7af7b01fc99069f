/* Forty Thieves' search parts, compiled: forty_thieves.py's lost-position test
 * (is_lost, its _Frozen greatest fixpoint), the look-around of a beam level
 * (_BeamRun._look_around) and the exhaustive depth-first search (_Dfs), answer for
 * answer and position for position.
 *
 * forty_thieves.py stays the reference: this file ports its move generation
 * (_candidates, in the same order), autoplay, canonical key, scores (the same
 * floating-point operations in the same order), the fixpoint (its sweeps in the same
 * order) and the two loops; tests/solver/test_forty_thieves_native.py checks that both
 * give the same answers on many positions, the same beam passes and depth-first
 * searches, and the same whole search. The argument for the pruning's soundness is in
 * forty_thieves.py's module docstring. The rules come in as tables the plug-in builds
 * from the engine (which card goes on which in the tableau, each card's suit and rank,
 * the card of each suit and rank, the copies of a card, the cards of a won game), and,
 * for each set of foundations met, the plug-in's foundation and autoplay tables
 * (asked of Python through a callback), so no rule is restated here.
 *
 * The look-around and the depth-first search release the GIL (they take it back only
 * to ask for a set of foundations' tables); the lost test, some microseconds, keeps it.
 *
 * Module: service.solver.plugins._forty_thieves_native; types Searcher (the tables)
 * and DepthFirst (one paused search).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "_native_keyset.h"

#define SLOTS 64         /* every card is below this (cards.py CARD_SLOTS) */
#define SUITS 4
#define RANKS 16         /* foundation ranks 1 .. king, king below this */
#define MAXPILES 64      /* piles of a position, at most */
#define MAXSTACKS 33     /* tableau piles (32 at most) and the waste */
#define MAXCARDS 255     /* cards outside the foundations, at most */
#define MAXCOPIES 4      /* copies of one card (decks), at most */
#define MAXFOUNDATIONS 8 /* foundations of one suit, at most */
#define NEVER (1 << 30)  /* a deal that never comes (forty_thieves.py NEVER) */
#define NO_CARD 0xff     /* in the tables: no such card */

/* The rules' tables of one game (see Searcher_init). */
typedef struct {
    PyObject_HEAD
    int ready;                       /* set once __init__ succeeded */
    int f0, nf, t0, nt, stock, waste; /* the layout: first pile and count of each group */
    int npiles;
    int copies;                      /* copies of each card, and foundations of each suit */
    int king;                        /* the highest foundation rank */
    int16_t goes_on[SLOTS];          /* the card a card goes on in the tableau (-1: none) */
    int16_t suit[SLOTS];             /* a card's suit (-1: not a card) */
    int16_t rank[SLOTS];             /* a card's foundation rank (1: first on a foundation) */
    int16_t card_at[SUITS][RANKS];   /* the card of a suit and rank (-1: none) */
    int16_t below[SLOTS];            /* the card that goes on a card in the tableau (-1: none) */
    int move_action, deal_action;    /* the engine's codes of a card move and of a deal */
    int cards;                       /* cards of the game: all home, it is won */
} Searcher;

/* A copy of a card outside the foundations: its stack (tableau piles first, then the
 * waste; -1 for the stock) and its index there (in the stock, in deal order). */
typedef struct { int16_t stack, index; } Where;

/* forty_thieves.py's _Frozen: the state of the fixpoint for one position. */
typedef struct {
    const Searcher *kn;
    int nstacks, waste;               /* stacks: the tableau piles, then the waste */
    const uint8_t *stacks[MAXSTACKS];
    int len[MAXSTACKS];
    int cut[MAXSTACKS];               /* each stack's frozen bottom part, in cards */
    uint8_t deal[MAXCARDS];           /* the stock in deal order (0 is dealt next) */
    int n;                            /* stock cards */
    uint8_t stock_frozen[MAXCARDS], stock_no_entry[MAXCARDS], waste_no_entry[MAXCARDS];
    Where where[SLOTS][MAXCOPIES];
    int nwhere[SLOTS];
    int heights[SUITS][MAXFOUNDATIONS];
    int nheights[SUITS];
    int reach[SUITS][MAXFOUNDATIONS][RANKS + 1];
} Frozen;

/* ---- the fixpoint (the methods of _Frozen, in its order) ------------------------- */

static void renew_reach(Frozen *z) {
    const Searcher *kn = z->kn;
    int ready[SLOTS];
    for (int c = 0; c < SLOTS; c++) ready[c] = NEVER;
    for (int si = 0; si < z->nstacks; si++)
        for (int i = z->cut[si]; i < z->len[si]; i++) ready[z->stacks[si][i]] = -1;
    for (int d = 0; d < z->n; d++)
        if (!z->stock_frozen[d] && ready[z->deal[d]] > d) ready[z->deal[d]] = d;
    for (int s = 0; s < SUITS; s++) {
        for (int f = 0; f < z->nheights[s]; f++) {
            int *row = z->reach[s][f];
            for (int r = 0; r <= RANKS; r++) row[r] = NEVER;
            int worst = -1;
            for (int r = z->heights[s][f] + 1; r <= kn->king; r++) {
                row[r] = worst; /* the ranks h+1 .. r-1 */
                int c = kn->card_at[s][r];
                if (ready[c] > worst) worst = ready[c];
            }
        }
    }
}

static int takes(const Frozen *z, int card, int si, int k, int deadline) {
    int higher = z->kn->goes_on[card];
    if (higher < 0) return 0;
    for (int j = 0; j < z->nwhere[higher]; j++) {
        int zs = z->where[higher][j].stack, zi = z->where[higher][j].index;
        if (zs < 0) {
            if (zi < deadline && !z->stock_no_entry[zi]) return 1;
        } else if (zs == z->waste) {
            if (!z->waste_no_entry[zi]) return 1;
        } else if (zs == si) {
            if (zi >= k && takes(z, higher, si, zi + 1, deadline)) return 1;
        } else if (zi >= z->cut[zs] - 1) {
            return 1;
        }
    }
    return 0;
}

static int goes_home(const Frozen *z, int card, int si, int k, int deadline) {
    int s = z->kn->suit[card], r = z->kn->rank[card];
    int slots = 0;
    for (int f = 0; f < z->nheights[s]; f++)
        if (z->reach[s][f][r] < deadline) slots++;
    if (slots == 1 && si >= 0) {
        for (int j = 0; j < z->nwhere[card]; j++)
            if (z->where[card][j].stack == si && z->where[card][j].index >= k) return 0;
        return 1;
    }
    return slots > 0;
}

static int settle(Frozen *z) {
    int deadline[MAXCARDS + 1];
    int n = z->n, waste = z->waste;
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int si = 0; si < waste; si++)
            if (z->cut[si] == 0) return 0;
        renew_reach(z);
        deadline[n] = NEVER;
        for (int d = n - 1; d >= 0; d--) deadline[d] = z->stock_frozen[d] ? d : deadline[d + 1];
        const uint8_t *wp = z->stacks[waste];
        for (int i = z->cut[waste] > 0 ? z->cut[waste] - 1 : 0; i < z->len[waste]; i++) {
            if (z->waste_no_entry[i] && takes(z, wp[i], waste, i + 1, deadline[0])) {
                z->waste_no_entry[i] = 0;
                changed = 1;
            }
        }
        for (int d = 0; d < n; d++) {
            if (z->stock_no_entry[d] && takes(z, z->deal[d], -1, 0, deadline[d + 1])) {
                z->stock_no_entry[d] = 0;
                changed = 1;
            }
        }
        for (int si = 0; si <= waste; si++) {
            int k = z->cut[si];
            if (!k) continue;
            int card = z->stacks[si][k - 1], moves;
            if (si == waste)
                moves = !z->waste_no_entry[k - 1] || goes_home(z, card, si, k, deadline[0]);
            else
                moves = takes(z, card, si, k, NEVER) || goes_home(z, card, si, k, NEVER);
            if (moves) {
                z->cut[si] = k - 1;
                changed = 1;
            }
        }
        for (int d = 0; d < n; d++) {
            if (z->stock_frozen[d] && (!z->stock_no_entry[d] || goes_home(z, z->deal[d], -1, 0, deadline[d + 1]))) {
                z->stock_frozen[d] = 0;
                changed = 1;
            }
        }
    }
    for (int si = 0; si <= waste; si++)
        if (z->cut[si]) return 1;
    for (int d = 0; d < n; d++)
        if (z->stock_frozen[d]) return 1;
    return 0;
}

/* ---- the beam pass's look-around (forty_thieves.py _BeamRun._look_around) --------- */

#define POSCARDS 128 /* cards of a position outside the stock (and in it), at most */
#define MAXCAND 512  /* candidate moves of one position, at most */
/* Every key (a position's, at most POSCARDS + MAXSTACKS + 2 bytes; a set of foundations',
 * at most MAXPILES + POSCARDS) fits the key set's length byte. */
_Static_assert(MAXPILES + POSCARDS <= KEYSET_KEY_MAX && POSCARDS + MAXSTACKS + 2 <= KEYSET_KEY_MAX,
               "a key's length must fit the key set's length byte");

/* A position: each pile's length, and the cards of every pile but the stock one pile
 * after another (the stock is the level's: its first len[stock] cards). */
typedef struct {
    uint8_t len[MAXPILES];
    uint8_t c[POSCARDS];
} Pos;

typedef struct { uint8_t deal, s, t; } Step; /* a move from pile s to pile t, or a deal */

/* A position of the level: a beam entry (parent -1) or a child the look-around kept. */
typedef struct {
    Pos pos;
    double score;
    long long count;   /* the entry's tie-break */
    int32_t parent;    /* the node it was made from (-1: a beam entry, see beam) */
    int32_t beam;      /* a beam entry's index in the beam */
    int32_t homes;     /* its foundations' tables (see Level.tables) */
    int16_t back_s, back_t; /* the move that would only undo the move that made it (-1: none) */
    uint32_t steps;    /* where its moves start in Level.steps */
    uint16_t nsteps;
} Node;

typedef struct { int8_t home[SLOTS], safe[SLOTS]; } Homes; /* see forty_thieves.py _homes_of */

/* One call of the look-around: the level's positions and sets, and its Python side. */
typedef struct {
    const Searcher *kn;
    Vec nodes;   /* Node */
    Vec steps;   /* Step: each node's moves */
    Vec heap;    /* int32_t node ids, a binary heap by (score, count) */
    Vec deals;   /* int32_t node ids of the positions one deal on, in the order found */
    Vec tables;  /* Homes */
    KeySet layer, dealt, fnds; /* keys of the level, of the positions one deal on, of foundations */
    const uint8_t *stock;      /* the level's stock (every beam entry has it) */
    int nstock;
    double w_home, w_runs, w_waste, w_space;
    PyObject *homes_of;        /* foundations -> the Homes tables, as 2 * SLOTS bytes */
    PyThreadState *thread;     /* the saved thread state while the GIL is released */
    int failed;                /* a Python exception is set (the GIL held to set it) */
} Level;

static int pile_start(const Searcher *kn, const Pos *p, int pile) {
    int at = 0;
    for (int i = 0; i < pile; i++)
        if (i != kn->stock) at += p->len[i];
    return at;
}

static int top_card(const Searcher *kn, const Pos *p, int pile) {
    return p->len[pile] ? p->c[pile_start(kn, p, pile) + p->len[pile] - 1] : -1;
}

/* Moves the top card of pile s onto pile t (neither the stock). */
static void move_card(const Searcher *kn, Pos *p, int s, int t) {
    int from = pile_start(kn, p, s) + p->len[s] - 1, to = pile_start(kn, p, t) + p->len[t];
    uint8_t card = p->c[from];
    if (from < to) {
        memmove(p->c + from, p->c + from + 1, (size_t)(to - 1 - from));
        p->c[to - 1] = card;
    } else {
        memmove(p->c + to + 1, p->c + to, (size_t)(from - to));
        p->c[to] = card;
    }
    p->len[s]--;
    p->len[t]++;
}

/* Deals the stock's top card onto the waste. */
static void deal_card(const Level *L, Pos *p) {
    const Searcher *kn = L->kn;
    int to = pile_start(kn, p, kn->waste) + p->len[kn->waste];
    int used = pile_start(kn, p, kn->npiles);
    memmove(p->c + to + 1, p->c + to, (size_t)(used - to));
    p->c[to] = L->stock[--p->len[kn->stock]];
    p->len[kn->waste]++;
}

/* The index of the Homes tables of p's foundations, asked of Python when new (-1: an
 * error, L->failed or out of memory). */
static int homes_index(Level *L, const Pos *p) {
    const Searcher *kn = L->kn;
    uint8_t key[MAXPILES + POSCARDS];
    size_t n = 0;
    int at = pile_start(kn, p, kn->f0);
    for (int f = kn->f0; f < kn->f0 + kn->nf; f++) {
        key[n++] = p->len[f];
        memcpy(key + n, p->c + at, p->len[f]);
        n += p->len[f];
        at += p->len[f];
    }
    uint32_t id;
    int added = keyset_add(&L->fnds, key, n, &id);
    if (added <= 0) return added < 0 ? -1 : (int)id;
    if (vec_reserve(&L->tables, 1)) return -1;
    Homes *h = (Homes *)L->tables.p + L->tables.len;
    PyEval_RestoreThread(L->thread);
    PyObject *fnd = PyTuple_New(kn->nf), *got = NULL;
    int ok = fnd != NULL;
    at = pile_start(kn, p, kn->f0);
    for (int f = 0; ok && f < kn->nf; f++) {
        PyObject *b = PyBytes_FromStringAndSize((const char *)p->c + at, p->len[kn->f0 + f]);
        at += p->len[kn->f0 + f];
        if (!b) ok = 0;
        else PyTuple_SET_ITEM(fnd, f, b);
    }
    if (ok) got = PyObject_CallOneArg(L->homes_of, fnd);
    ok = got != NULL;
    if (ok && (!PyBytes_Check(got) || PyBytes_GET_SIZE(got) != 2 * SLOTS)) {
        PyErr_Format(PyExc_ValueError, "homes_of: %d bytes (home, then safe, per card)", 2 * SLOTS);
        ok = 0;
    }
    for (int i = 0; ok && i < 2 * SLOTS; i++) {
        uint8_t v = (uint8_t)PyBytes_AS_STRING(got)[i];
        if (v != NO_CARD && (v < kn->f0 || v >= kn->f0 + kn->nf)) {
            PyErr_SetString(PyExc_ValueError, "homes_of: a foundation or 0xff per card");
            ok = 0;
        } else {
            (i < SLOTS ? h->home : h->safe)[i % SLOTS] = v == NO_CARD ? -1 : (int8_t)v;
        }
    }
    Py_XDECREF(fnd);
    Py_XDECREF(got);
    if (!ok) L->failed = 1;
    L->thread = PyEval_SaveThread();
    if (!ok) return -1;
    L->tables.len++;
    return (int)id;
}

/* forty_thieves.py auto: the engine's autoplay until none applies, its moves appended
 * to steps; node->homes follows the foundations. 0, or -1 on an error. */
static int autoplay(Level *L, Node *node, Step *steps, int *nsteps) {
    const Searcher *kn = L->kn;
    for (;;) {
        const Homes *h = (const Homes *)L->tables.p + node->homes;
        int moved = 0;
        for (int i = 0; i <= kn->nt && !moved; i++) {
            int s = i < kn->nt ? kn->t0 + i : kn->waste;
            int card = top_card(kn, &node->pos, s);
            if (card < 0 || h->safe[card] < 0) continue;
            int f = h->safe[card];
            move_card(kn, &node->pos, s, f);
            steps[(*nsteps)++] = (Step){0, (uint8_t)s, (uint8_t)f};
            node->homes = homes_index(L, &node->pos);
            if (node->homes < 0) return -1;
            moved = 1;
        }
        if (!moved) return 0;
    }
}

/* forty_thieves.py _candidates: the legal moves (merged), in the order tried. */
static int candidates(const Level *L, const Pos *p, const Homes *h, Step *out) {
    const Searcher *kn = L->kn;
    /* the kinds, in order: home, waste builds, emptying, uncover home, uncover, deal,
     * waste to space, to space, swaps, swaps into a space */
    enum { HOME, WASTE_BUILD, EMPTYING, UNCOVER_HOME, UNCOVER, DEAL, WASTE_SPACE, TO_SPACE, SWAP, SWAP_SPACE, KINDS };
    Step kinds[KINDS][MAXSTACKS * MAXSTACKS];
    int nk[KINDS] = {0};
    int takers[SLOTS][MAXSTACKS], nt[SLOTS];
    const uint8_t *top[MAXSTACKS];
    int len[MAXSTACKS];
    memset(nt, 0, sizeof nt);
    int empty = -1;
    for (int i = 0; i < kn->nt; i++) {
        int t = kn->t0 + i;
        len[i] = p->len[t];
        top[i] = p->c + pile_start(kn, p, t) + len[i] - 1;
        if (len[i]) {
            int want = kn->below[*top[i]];
            if (want >= 0) takers[want][nt[want]++] = t;
        } else if (empty < 0) {
            empty = t;
        }
    }
#define ADD(kind, s_, t_) (kinds[kind][nk[kind]++] = (Step){0, (uint8_t)(s_), (uint8_t)(t_)})
    for (int i = 0; i < kn->nt; i++) {
        if (!len[i]) continue;
        int s = kn->t0 + i, card = *top[i];
        if (h->home[card] >= 0) ADD(HOME, s, h->home[card]);
        if (len[i] > 1) {
            int under = top[i][-1];
            if (kn->below[under] == card) { /* on its parent: the move only swaps copies */
                for (int j = 0; j < nt[card]; j++) ADD(SWAP, s, takers[card][j]);
                if (empty >= 0) ADD(SWAP_SPACE, s, empty);
                continue;
            }
            int kind = h->home[under] >= 0 ? UNCOVER_HOME : UNCOVER;
            for (int j = 0; j < nt[card]; j++) ADD(kind, s, takers[card][j]);
            if (empty >= 0) ADD(TO_SPACE, s, empty);
        } else {
            for (int j = 0; j < nt[card]; j++) ADD(EMPTYING, s, takers[card][j]);
        }
    }
    int wcard = top_card(kn, p, kn->waste);
    if (wcard >= 0) {
        if (h->home[wcard] >= 0) ADD(HOME, kn->waste, h->home[wcard]);
        for (int j = 0; j < nt[wcard]; j++) ADD(WASTE_BUILD, kn->waste, takers[wcard][j]);
        if (empty >= 0) ADD(WASTE_SPACE, kn->waste, empty);
    }
    if (p->len[kn->stock]) kinds[DEAL][nk[DEAL]++] = (Step){1, 0, 0};
#undef ADD
    int n = 0;
    for (int k = 0; k < KINDS; k++)
        for (int j = 0; j < nk[k] && n < MAXCAND; j++) out[n++] = kinds[k][j];
    return n;
}

/* forty_thieves.py children, for one candidate: ``child`` holds the parent's position
 * and foundations' tables; makes the move ``m`` on it and the autoplay after it (when
 * the move went home or uncovered a card the autoplay takes), its moves into ``steps``,
 * and its back move (forty_thieves.py _undo: a lone move from pile to pile). Returns
 * the moves' count (*to_home: whether the move went home), or -1 on an error. */
static int make_child(Level *L, Node *child, Step m, Step *steps, int *to_home) {
    const Searcher *kn = L->kn;
    const Homes *h = (const Homes *)L->tables.p + child->homes; /* the parent's */
    int exposed;
    *to_home = 0;
    if (m.deal) {
        deal_card(L, &child->pos);
        exposed = top_card(kn, &child->pos, kn->waste);
    } else {
        move_card(kn, &child->pos, m.s, m.t);
        exposed = top_card(kn, &child->pos, m.s);
        *to_home = m.t >= kn->f0 && m.t < kn->f0 + kn->nf;
    }
    int nsteps = 0;
    steps[nsteps++] = m;
    if (*to_home || (exposed >= 0 && h->safe[exposed] >= 0)) {
        if (*to_home && (child->homes = homes_index(L, &child->pos)) < 0) return -1;
        if (autoplay(L, child, steps, &nsteps)) return -1;
    }
    child->nsteps = (uint16_t)nsteps;
    int in_tableau = m.s >= kn->t0 && m.s < kn->t0 + kn->nt && m.t >= kn->t0 && m.t < kn->t0 + kn->nt;
    child->back_s = child->back_t = -1;
    if (!m.deal && nsteps == 1 && in_tableau) {
        child->back_s = m.t;
        child->back_t = m.s;
    }
    return nsteps;
}

/* forty_thieves.py key: the stock's length (one byte), the waste, then each tableau
 * pile, sorted, after a zero byte. Returns its length. */
static size_t pos_key(const Searcher *kn, const Pos *p, uint8_t *out) {
    const uint8_t *pile[MAXSTACKS];
    int len[MAXSTACKS];
    int at = pile_start(kn, p, kn->t0);
    for (int i = 0; i < kn->nt; i++) {
        const uint8_t *b = p->c + at;
        int n = p->len[kn->t0 + i];
        at += n;
        int j = i;
        for (; j > 0; j--) { /* insertion sort, as bytes compare */
            int m = len[j - 1] < n ? len[j - 1] : n;
            int c = memcmp(pile[j - 1], b, (size_t)m);
            if (c < 0 || (c == 0 && len[j - 1] <= n)) break;
            pile[j] = pile[j - 1];
            len[j] = len[j - 1];
        }
        pile[j] = b;
        len[j] = n;
    }
    size_t k = 0;
    out[k++] = p->len[kn->stock];
    int w = p->len[kn->waste];
    memcpy(out + k, p->c + pile_start(kn, p, kn->waste), (size_t)w);
    k += (size_t)w;
    for (int i = 0; i < kn->nt; i++) {
        out[k++] = 0;
        memcpy(out + k, pile[i], (size_t)len[i]);
        k += (size_t)len[i];
    }
    return k;
}

static int home_count(const Searcher *kn, const Pos *p) {
    int n = 0;
    for (int f = kn->f0; f < kn->f0 + kn->nf; f++) n += p->len[f];
    return n;
}

/* forty_thieves.py weighted_score, with the level's weights (the same operations in
 * the same order, so the same double). */
static double full_score(const Level *L, const Pos *p) {
    const Searcher *kn = L->kn;
    int runs = 0, spaces = 0;
    int at = pile_start(kn, p, kn->t0);
    for (int i = 0; i < kn->nt; i++) {
        int n = p->len[kn->t0 + i];
        if (!n) spaces++;
        int prev = -1;
        for (int j = 0; j < n; j++) {
            int c = p->c[at + j];
            if (prev < 0 || c != kn->below[prev]) runs++;
            prev = c;
        }
        at += n;
    }
    return -L->w_home * home_count(kn, p) + L->w_runs * runs + L->w_waste * p->len[kn->waste] - L->w_space * spaces;
}

static int node_less(const Node *a, const Node *b) {
    return a->score < b->score || (a->score == b->score && a->count < b->count);
}

static int heap_push(Level *L, int32_t id) {
    if (vec_reserve(&L->heap, 1)) return -1;
    int32_t *h = (int32_t *)L->heap.p;
    const Node *nodes = (const Node *)L->nodes.p;
    size_t i = L->heap.len++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!node_less(&nodes[id], &nodes[h[up]])) break;
        h[i] = h[up];
        i = up;
    }
    h[i] = id;
    return 0;
}

static int32_t heap_pop(Level *L) {
    int32_t *h = (int32_t *)L->heap.p;
    const Node *nodes = (const Node *)L->nodes.p;
    int32_t out = h[0], last = h[--L->heap.len];
    size_t n = L->heap.len, i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && node_less(&nodes[h[c + 1]], &nodes[h[c]])) c++;
        if (!node_less(&nodes[h[c]], &nodes[last])) break;
        h[i] = h[c];
        i = c;
    }
    if (n) h[i] = last;
    return out;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Keeps the scratch node and its steps: its id, or -1 when out of memory. */
static int32_t keep_node(Level *L, const Node *scratch, const Step *steps) {
    if (vec_reserve(&L->nodes, 1) || vec_reserve(&L->steps, scratch->nsteps)) return -1;
    Node *node = (Node *)L->nodes.p + L->nodes.len;
    *node = *scratch;
    node->steps = (uint32_t)L->steps.len;
    memcpy((Step *)L->steps.p + L->steps.len, steps, scratch->nsteps * sizeof(Step));
    L->steps.len += scratch->nsteps;
    return (int32_t)L->nodes.len++;
}

enum { END_DONE, END_WON, END_TIME, END_STATES, END_ERROR };

typedef struct {
    long long budget, seen, max_states, count, tick;
    double deadline;
    int32_t won;  /* the winning node (END_WON) */
    long long won_deal; /* the first position one deal on that is won, in the deals (-1: none) */
} Run;

/* The look-around's loop (the GIL released): _look_around's while loop, child for
 * child. Returns how it ended. */
static int look_around(Level *L, Run *r) {
    const Searcher *kn = L->kn;
    Step cand[MAXCAND], steps[MAXCARDS + 1];
    uint8_t key[POSCARDS + MAXSTACKS + 2];
    while (L->heap.len && r->budget > 0) {
        r->budget--;
        int32_t id = heap_pop(L);
        Node parent = ((const Node *)L->nodes.p)[id]; /* a copy: the array may move */
        r->tick++;
        if ((r->tick & 15) == 0 && now_seconds() > r->deadline) return END_TIME;
        if (r->seen + (long long)keyset_count(&L->layer) + (long long)L->deals.len >= r->max_states) return END_STATES;
        const Homes *h = (const Homes *)L->tables.p + parent.homes;
        int n = candidates(L, &parent.pos, h, cand);
        for (int i = 0; i < n; i++) {
            Step m = cand[i];
            if (!m.deal && m.s == parent.back_s && m.t == parent.back_t) continue;
            Node child = parent;
            child.parent = id;
            int to_home, nsteps = make_child(L, &child, m, steps, &to_home);
            if (nsteps < 0) return END_ERROR;
            r->count++;
            child.count = r->count;
            size_t klen = pos_key(kn, &child.pos, key);
            uint32_t kid;
            if (m.deal) { /* a deal: the next level */
                int added = keyset_add(&L->dealt, key, klen, &kid);
                if (added < 0) return END_ERROR;
                if (!added) continue;
                child.score = nsteps == 1 ? parent.score + L->w_waste : full_score(L, &child.pos);
                int32_t cid = keep_node(L, &child, steps);
                if (cid < 0 || vec_reserve(&L->deals, 1)) return END_ERROR;
                if (r->won_deal < 0 && home_count(kn, &child.pos) == kn->cards) r->won_deal = (long long)L->deals.len;
                ((int32_t *)L->deals.p)[L->deals.len++] = cid;
                continue;
            }
            int added = keyset_add(&L->layer, key, klen, &kid);
            if (added < 0) return END_ERROR;
            if (!added) continue;
            int won = 0;
            if (nsteps == 1) {
                double sc2 = parent.score;
                if (m.s == kn->waste) {
                    sc2 -= L->w_waste;
                } else {
                    int sl = parent.pos.len[m.s];
                    const uint8_t *sp = parent.pos.c + pile_start(kn, &parent.pos, m.s);
                    if (sl == 1) sc2 -= L->w_runs + L->w_space;
                    else if (kn->below[sp[sl - 2]] != sp[sl - 1]) sc2 -= L->w_runs; /* it began a run */
                }
                if (to_home) {
                    sc2 -= L->w_home;
                    won = home_count(kn, &child.pos) == kn->cards;
                } else if (!parent.pos.len[m.t]) {
                    sc2 += L->w_runs + L->w_space;
                }
                child.score = sc2;
            } else {
                won = home_count(kn, &child.pos) == kn->cards;
                child.score = won ? 0.0 : full_score(L, &child.pos);
            }
            int32_t cid = keep_node(L, &child, steps);
            if (cid < 0) return END_ERROR;
            if (won) {
                r->won = cid;
                return END_WON;
            }
            if (heap_push(L, cid)) return END_ERROR;
        }
    }
    return END_DONE;
}

static void level_free(Level *L) {
    vec_free(&L->nodes);
    vec_free(&L->steps);
    vec_free(&L->heap);
    vec_free(&L->deals);
    vec_free(&L->tables);
    keyset_free(&L->layer);
    keyset_free(&L->dealt);
    keyset_free(&L->fnds);
}

static int level_init(Level *L, const Searcher *kn) {
    memset(L, 0, sizeof *L);
    L->kn = kn;
    L->nodes.size = sizeof(Node);
    L->steps.size = sizeof(Step);
    L->heap.size = L->deals.size = sizeof(int32_t);
    L->tables.size = sizeof(Homes);
    if (keyset_init(&L->layer, 256) || keyset_init(&L->dealt, 256) || keyset_init(&L->fnds, 256)) {
        level_free(L);
        return -1;
    }
    return 0;
}

/* A position (a tuple of bytes in the game's layout) as a Pos; the stock is *stock's
 * (the first position's, when *stock is NULL; every later one must have the same).
 * -1 with ValueError when malformed. */
static int read_piles(const Level *L, PyObject *piles, PyObject **stock, Pos *pos) {
    const Searcher *kn = L->kn;
    if (!PyTuple_Check(piles) || PyTuple_GET_SIZE(piles) != kn->npiles) goto bad;
    int at = 0, total = 0; /* cards packed (all but the stock's), and all cards */
    for (int i = 0; i < kn->npiles; i++) {
        PyObject *b = PyTuple_GET_ITEM(piles, i);
        if (!PyBytes_Check(b)) goto bad;
        Py_ssize_t n = PyBytes_GET_SIZE(b);
        const uint8_t *cards = (const uint8_t *)PyBytes_AS_STRING(b);
        if (total + n > POSCARDS) { /* the deals bring the stock's cards in */
            PyErr_Format(PyExc_ValueError, "position: more than %d cards", POSCARDS);
            return -1;
        }
        total += (int)n;
        for (Py_ssize_t j = 0; j < n; j++) {
            if (cards[j] >= SLOTS || kn->suit[cards[j]] < 0) {
                PyErr_Format(PyExc_ValueError, "position: %d is not a card", cards[j]);
                return -1;
            }
        }
        pos->len[i] = (uint8_t)n;
        if (i == kn->stock) {
            if (!*stock) *stock = b;
            else if (PyObject_RichCompareBool(b, *stock, Py_EQ) != 1) {
                PyErr_SetString(PyExc_ValueError, "beam: every entry has the same stock (one level)");
                return -1;
            }
            continue;
        }
        memcpy(pos->c + at, cards, (size_t)n);
        at += (int)n;
    }
    return 0;
bad:
    PyErr_Format(PyExc_ValueError, "position: a tuple of %d bytes piles", kn->npiles);
    return -1;
}

/* A beam entry's node (score, count, position; its back move from the trail's last
 * step); the level's stock is the first entry's. -1 with ValueError when malformed. */
static int read_entry(Level *L, PyObject *entry, PyObject **stock, Node *node) {
    const Searcher *kn = L->kn;
    static const char *shape = "beam: entries (score, count, piles: a tuple of bytes, trail: None or (moves, trail))";
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4) goto bad;
    PyObject *piles = PyTuple_GET_ITEM(entry, 2), *trail = PyTuple_GET_ITEM(entry, 3);
    memset(node, 0, sizeof *node);
    node->score = PyFloat_AsDouble(PyTuple_GET_ITEM(entry, 0));
    if (node->score == -1.0 && PyErr_Occurred()) return -1;
    node->count = PyLong_AsLongLong(PyTuple_GET_ITEM(entry, 1));
    if (node->count == -1 && PyErr_Occurred()) return -1;
    node->parent = -1;
    node->back_s = node->back_t = -1;
    if (read_piles(L, piles, stock, &node->pos)) return -1;
    if (trail != Py_None) {
        if (!PyTuple_Check(trail) || PyTuple_GET_SIZE(trail) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(trail, 0))) goto bad;
        PyObject *moves = PyTuple_GET_ITEM(trail, 0);
        if (PyTuple_GET_SIZE(moves) == 1) {
            PyObject *m = PyTuple_GET_ITEM(moves, 0);
            long v[4];
            if (!PyTuple_Check(m) || PyTuple_GET_SIZE(m) != 4) goto bad;
            for (int j = 0; j < 4; j++) {
                v[j] = PyLong_AsLong(PyTuple_GET_ITEM(m, j));
                if (v[j] == -1 && PyErr_Occurred()) return -1;
            }
            int ts = v[1] >= kn->t0 && v[1] < kn->t0 + kn->nt, tt = v[2] >= kn->t0 && v[2] < kn->t0 + kn->nt;
            if (v[0] == kn->move_action && v[3] == 1 && ts && tt && v[1] != v[2]) { /* forty_thieves.py _undo */
                node->back_s = (int16_t)v[2];
                node->back_t = (int16_t)v[1];
            }
        }
    }
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, shape);
    return -1;
}

/* A node's position as the plug-in's tuple of bytes (the stock: ``stock``, which has
 * its length). */
static PyObject *piles_of(const Level *L, const Pos *p, PyObject *stock) {
    const Searcher *kn = L->kn;
    PyObject *out = PyTuple_New(kn->npiles);
    if (!out) return NULL;
    int at = 0;
    for (int i = 0; i < kn->npiles; i++) {
        PyObject *b;
        if (i == kn->stock) {
            Py_INCREF(stock);
            b = stock;
        } else {
            b = PyBytes_FromStringAndSize((const char *)p->c + at, p->len[i]);
            at += p->len[i];
            if (!b) {
                Py_DECREF(out);
                return NULL;
            }
        }
        PyTuple_SET_ITEM(out, i, b);
    }
    return out;
}

/* Moves as the plug-in's tuple of MoveLike tuples. */
static PyObject *steps_of(const Searcher *kn, const Step *steps, int n) {
    PyObject *out = PyTuple_New(n);
    if (!out) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *m = steps[i].deal ? Py_BuildValue("(iiii)", kn->deal_action, -1, -1, 0)
                                    : Py_BuildValue("(iiii)", kn->move_action, steps[i].s, steps[i].t, 1);
        if (!m) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, m);
    }
    return out;
}

/* A node's moves (see steps_of). */
static PyObject *node_steps(const Level *L, const Node *node) {
    return steps_of(L->kn, (const Step *)L->steps.p + node->steps, node->nsteps);
}

/* The trail of node ``id`` (a new reference): a beam entry's own, else (its moves, its
 * parent's trail), made once per node (memo). */
static PyObject *trail_of(const Level *L, PyObject *const *trails, PyObject **memo, int32_t id) {
    const Node *nodes = (const Node *)L->nodes.p;
    Vec chain = {NULL, 0, 0, sizeof(int32_t)};
    int32_t at = id;
    while (!memo[at] && nodes[at].parent >= 0) { /* up to a node whose trail is known */
        if (vec_reserve(&chain, 1)) {
            vec_free(&chain);
            return PyErr_NoMemory();
        }
        ((int32_t *)chain.p)[chain.len++] = at;
        at = nodes[at].parent;
    }
    if (!memo[at]) { /* a beam entry */
        memo[at] = trails[nodes[at].beam];
        Py_INCREF(memo[at]);
    }
    while (chain.len) {
        int32_t child = ((int32_t *)chain.p)[--chain.len];
        PyObject *moves = node_steps(L, &nodes[child]);
        if (!moves) {
            vec_free(&chain);
            return NULL;
        }
        memo[child] = PyTuple_Pack(2, moves, memo[nodes[child].parent]);
        Py_DECREF(moves);
        if (!memo[child]) {
            vec_free(&chain);
            return NULL;
        }
    }
    vec_free(&chain);
    Py_INCREF(memo[id]);
    return memo[id];
}

/* The positions one deal on, as (key, entry) pairs in the order found. */
static PyObject *deals_of(Level *L, PyObject *const *trails, PyObject **memo, PyObject *stock) {
    Py_ssize_t left = PyBytes_GET_SIZE(stock) ? PyBytes_GET_SIZE(stock) - 1 : 0; /* no deals from an empty stock */
    PyObject *dealt = PyBytes_FromStringAndSize(PyBytes_AS_STRING(stock), left);
    PyObject *out = dealt ? PyList_New((Py_ssize_t)L->deals.len) : NULL;
    uint8_t key[POSCARDS + MAXSTACKS + 2];
    for (size_t i = 0; out && i < L->deals.len; i++) {
        const Node *node = (const Node *)L->nodes.p + ((int32_t *)L->deals.p)[i];
        size_t n = pos_key(L->kn, &node->pos, key);
        PyObject *k = PyBytes_FromStringAndSize((const char *)key, (Py_ssize_t)n);
        PyObject *piles = piles_of(L, &node->pos, dealt);
        PyObject *moves = node_steps(L, node);
        PyObject *up = trail_of(L, trails, memo, node->parent);
        PyObject *trail = moves && up ? PyTuple_Pack(2, moves, up) : NULL;
        PyObject *entry = piles && trail ? Py_BuildValue("(dLOO)", node->score, node->count, piles, trail) : NULL;
        PyObject *pair = k && entry ? PyTuple_Pack(2, k, entry) : NULL;
        Py_XDECREF(k);
        Py_XDECREF(piles);
        Py_XDECREF(moves);
        Py_XDECREF(up);
        Py_XDECREF(trail);
        Py_XDECREF(entry);
        if (!pair) Py_CLEAR(out);
        else PyList_SET_ITEM(out, (Py_ssize_t)i, pair);
    }
    Py_XDECREF(dealt);
    return out;
}

static const char *const END_NAMES[] = {"done", "won", "time", "states"};

static PyObject *Searcher_look_around(Searcher *self, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"beam", "homes_of", "weights", "budget", "deadline", "max_states", "seen", "count", "tick",
                         NULL};
    PyObject *beam, *homes_of;
    Run r;
    Level L;
    double w[4];
    if (!self->ready) {
        PyErr_SetString(PyExc_ValueError, "Searcher: not initialised");
        return NULL;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O(dddd)LdLLLL", kw, &PyList_Type, &beam, &homes_of, &w[0], &w[1],
                                     &w[2], &w[3], &r.budget, &r.deadline, &r.max_states, &r.seen, &r.count, &r.tick))
        return NULL;
    if (!PyList_GET_SIZE(beam) || PyList_GET_SIZE(beam) > INT32_MAX / 2) {
        PyErr_SetString(PyExc_ValueError, "beam: one entry at least");
        return NULL;
    }
    if (level_init(&L, self)) return PyErr_NoMemory();
    L.w_home = w[0];
    L.w_runs = w[1];
    L.w_waste = w[2];
    L.w_space = w[3];
    L.homes_of = homes_of;
    r.won = -1;
    r.won_deal = -1;
    PyObject *stock = NULL, *held = NULL, *out = NULL, **memo = NULL;
    Py_ssize_t nbeam = PyList_GET_SIZE(beam);
    /* the beam entries' trails and the level's stock, held while the GIL is released */
    PyObject **trails = calloc((size_t)nbeam, sizeof(PyObject *));
    if (!trails || vec_reserve(&L.nodes, (size_t)nbeam)) {
        free(trails);
        level_free(&L);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < nbeam; i++) {
        Node *node = (Node *)L.nodes.p + i;
        PyObject *entry = PyList_GET_ITEM(beam, i);
        if (read_entry(&L, entry, &stock, node)) goto done;
        trails[i] = PyTuple_GET_ITEM(entry, 3);
        Py_INCREF(trails[i]);
        node->beam = (int32_t)i;
        L.nodes.len++;
    }
    held = stock;
    Py_INCREF(held);
    L.stock = (const uint8_t *)PyBytes_AS_STRING(stock);
    L.nstock = (int)PyBytes_GET_SIZE(stock);
    int end = END_DONE;
    L.thread = PyEval_SaveThread();
    uint8_t key[POSCARDS + MAXSTACKS + 2];
    for (size_t i = 0; i < L.nodes.len && end == END_DONE; i++) {
        Node *node = (Node *)L.nodes.p + i;
        int homes = homes_index(&L, &node->pos);
        uint32_t kid;
        node = (Node *)L.nodes.p + i;
        node->homes = homes;
        if (homes < 0 || keyset_add(&L.layer, key, pos_key(self, &node->pos, key), &kid) < 0 ||
            heap_push(&L, (int32_t)i))
            end = END_ERROR;
    }
    if (end == END_DONE) end = look_around(&L, &r);
    PyEval_RestoreThread(L.thread);
    if (end == END_ERROR) {
        if (!L.failed) PyErr_NoMemory();
        goto done;
    }
    memo = calloc(L.nodes.len, sizeof(PyObject *));
    if (!memo) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *deals = NULL, *won = NULL;
    if (end == END_DONE) {
        if (!(deals = deals_of(&L, trails, memo, stock))) goto done;
    } else {
        Py_INCREF(Py_None);
        deals = Py_None;
    }
    if (end == END_WON) {
        if (!(won = trail_of(&L, trails, memo, r.won))) {
            Py_DECREF(deals);
            goto done;
        }
    } else {
        Py_INCREF(Py_None);
        won = Py_None;
    }
    out = Py_BuildValue("(snnNNLLLO)", END_NAMES[end], (Py_ssize_t)keyset_count(&L.layer), (Py_ssize_t)L.deals.len,
                        deals, won, end == END_DONE ? r.won_deal : -1LL, r.count, r.tick,
                        L.heap.len ? Py_True : Py_False);
done:
    if (memo) {
        for (size_t i = 0; i < L.nodes.len; i++) Py_XDECREF(memo[i]);
        free(memo);
    }
    for (Py_ssize_t i = 0; i < nbeam; i++) Py_XDECREF(trails[i]);
    free(trails);
    Py_XDECREF(held);
    level_free(&L);
    return out;
}

/* ---- reading a position ----------------------------------------------------------- */

/* What makes a position malformed for the lost test (read_frozen). */
enum { FROZEN_OK, FROZEN_NOT_A_CARD, FROZEN_COPIES, FROZEN_TOO_MANY, FROZEN_FOUNDATION, FROZEN_SUIT_FOUNDATIONS };

/* Sets the ValueError of a read_frozen code (the GIL held). */
static void frozen_error(const Searcher *kn, int code) {
    switch (code) {
    case FROZEN_NOT_A_CARD: PyErr_SetString(PyExc_ValueError, "position: a byte that is not a card"); break;
    case FROZEN_COPIES: PyErr_Format(PyExc_ValueError, "position: a card with more than %d copies", kn->copies); break;
    case FROZEN_TOO_MANY:
        PyErr_Format(PyExc_ValueError, "position: more than %d cards outside the foundations", MAXCARDS);
        break;
    case FROZEN_FOUNDATION:
        PyErr_SetString(PyExc_ValueError, "position: a foundation that is not a suit's cards up from its first rank");
        break;
    default:
        PyErr_Format(PyExc_ValueError, "position: more than %d foundations of one suit", MAXFOUNDATIONS);
        break;
    }
}

/* Notes a copy of a card outside the foundations (a read_frozen code). */
static int note_copy(const Searcher *kn, Frozen *z, int card, int stack, int index) {
    if (card >= SLOTS || kn->suit[card] < 0) return FROZEN_NOT_A_CARD;
    if (z->nwhere[card] >= kn->copies) return FROZEN_COPIES;
    z->where[card][z->nwhere[card]++] = (Where){(int16_t)stack, (int16_t)index};
    return FROZEN_OK;
}

/* The _Frozen of a position given as each pile's cards and length (the game's layout),
 * whose tableau piles are all non-empty; FROZEN_OK or what is malformed (no Python
 * call: it runs without the GIL too). The stacks point into the piles. */
static int read_frozen(const Searcher *kn, const uint8_t *const *pile, const int *len, Frozen *z) {
    memset(z->nwhere, 0, sizeof z->nwhere);
    memset(z->nheights, 0, sizeof z->nheights);
    z->kn = kn;
    z->nstacks = kn->nt + 1;
    z->waste = kn->nt;
    int total = len[kn->stock];
    for (int si = 0; si < z->nstacks; si++) {
        int at = si < kn->nt ? kn->t0 + si : kn->waste;
        z->stacks[si] = pile[at];
        z->len[si] = z->cut[si] = len[at];
        total += len[at];
    }
    if (total > MAXCARDS) return FROZEN_TOO_MANY;
    for (int si = 0; si < z->nstacks; si++) {
        for (int i = 0; i < z->len[si]; i++) {
            int code = note_copy(kn, z, z->stacks[si][i], si, i);
            if (code) return code;
        }
    }
    const uint8_t *sp = pile[kn->stock];
    z->n = len[kn->stock];
    for (int d = 0; d < z->n; d++) {
        z->deal[d] = sp[z->n - 1 - d];
        z->stock_frozen[d] = z->stock_no_entry[d] = 1;
        int code = note_copy(kn, z, z->deal[d], -1, d);
        if (code) return code;
    }
    for (int i = 0; i < z->len[z->waste]; i++) z->waste_no_entry[i] = 1;
    for (int f = kn->f0; f < kn->f0 + kn->nf; f++) {
        int h = len[f];
        if (!h) continue;
        int first = pile[f][0];
        if (first >= SLOTS || kn->suit[first] < 0 || h > kn->king) return FROZEN_FOUNDATION;
        int s = kn->suit[first];
        if (z->nheights[s] >= MAXFOUNDATIONS) return FROZEN_SUIT_FOUNDATIONS;
        z->heights[s][z->nheights[s]++] = h;
    }
    for (int s = 0; s < SUITS; s++) /* a suit's foundations not started yet (any empty one) */
        while (z->nheights[s] < kn->copies) z->heights[s][z->nheights[s]++] = 0;
    return FROZEN_OK;
}

/* is_lost of a position given as its piles: 1 lost, 0 not, or a read_frozen code
 * negated when malformed. */
static int lost_piles(const Searcher *kn, const uint8_t *const *pile, const int *len) {
    Frozen z;
    int code = read_frozen(kn, pile, len, &z);
    if (code) return -code;
    for (int t = 0; t < kn->nt; t++)
        if (!z.len[t]) return 0; /* a space: never lost */
    return settle(&z);
}

/* ---- the Python type ------------------------------------------------------------------ */

/* Reads a table of SLOTS signed bytes (NO_CARD, 0xff, reads back as -1). */
static int read_table(PyObject *obj, const char *name, int16_t *out, Py_ssize_t size) {
    Py_buffer b;
    if (PyObject_GetBuffer(obj, &b, PyBUF_SIMPLE)) return -1;
    if (b.len != size) {
        PyBuffer_Release(&b);
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes", name, size);
        return -1;
    }
    for (Py_ssize_t i = 0; i < size; i++) {
        uint8_t v = ((const uint8_t *)b.buf)[i];
        out[i] = v == NO_CARD ? -1 : v;
    }
    PyBuffer_Release(&b);
    return 0;
}

static int Searcher_init(Searcher *self, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"layout", "goes_on", "below", "suit", "rank", "card_at", "copies", "cards", "move_action",
                         "deal_action", NULL};
    PyObject *goes_on, *below, *suit, *rank, *card_at;
    int f0, nf, t0, nt, stock, waste, copies, cards, move_action, deal_action;
    self->ready = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "(iiiiii)OOOOOiiii", kw, &f0, &nf, &t0, &nt, &stock, &waste, &goes_on,
                                     &below, &suit, &rank, &card_at, &copies, &cards, &move_action, &deal_action))
        return -1;
    /* every pile of the layout once: the groups cover 0 .. npiles-1 without overlap */
    int npiles = nf >= 1 && nf <= MAXPILES && nt >= 1 && nt < MAXSTACKS ? nf + nt + 2 : MAXPILES + 1;
    int owner[MAXPILES] = {0};
    int ok = f0 >= 0 && nf >= 1 && t0 >= 0 && nt >= 1 && nt < MAXSTACKS && npiles <= MAXPILES;
    int first[] = {f0, t0, stock, waste}, count[] = {nf, nt, 1, 1};
    for (int g = 0; ok && g < 4; g++) {
        for (int i = first[g]; ok && i < first[g] + count[g]; i++) {
            ok = i >= 0 && i < npiles && !owner[i];
            if (ok) owner[i] = 1;
        }
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError,
                        "layout: (first foundation, foundations, first tableau pile, tableau piles, stock, waste), "
                        "every pile once");
        return -1;
    }
    if (copies < 1 || copies > MAXCOPIES || copies > MAXFOUNDATIONS) {
        PyErr_Format(PyExc_ValueError, "copies: 1 to %d", MAXCOPIES);
        return -1;
    }
    if (read_table(goes_on, "goes_on", self->goes_on, SLOTS) || read_table(below, "below", self->below, SLOTS) ||
        read_table(suit, "suit", self->suit, SLOTS) ||
        read_table(rank, "rank", self->rank, SLOTS) || read_table(card_at, "card_at", &self->card_at[0][0], SUITS * RANKS))
        return -1;
    int king = 0;
    for (int c = 0; c < SLOTS; c++) {
        if (self->suit[c] < 0) continue;
        int r = self->rank[c], g = self->goes_on[c], b = self->below[c];
        if (self->suit[c] >= SUITS || r < 1 || r >= RANKS || self->card_at[self->suit[c]][r] != c ||
            (g >= 0 && (g >= SLOTS || self->suit[g] < 0)) || (b >= 0 && (b >= SLOTS || self->suit[b] < 0))) {
            PyErr_SetString(PyExc_ValueError, "tables: a card's suit, rank, card_at, goes_on and below disagree");
            return -1;
        }
        king = r > king ? r : king;
    }
    for (int s = 0; s < SUITS; s++) {
        for (int r = 1; r <= king; r++) {
            int c = self->card_at[s][r];
            if (c < 0 || c >= SLOTS || self->suit[c] != s || self->rank[c] != r) {
                PyErr_SetString(PyExc_ValueError, "card_at: every suit has every rank up to the highest");
                return -1;
            }
        }
    }
    self->f0 = f0; self->nf = nf; self->t0 = t0; self->nt = nt; self->stock = stock; self->waste = waste;
    self->npiles = npiles;
    self->copies = copies;
    self->king = king;
    if (cards < 1) {
        PyErr_SetString(PyExc_ValueError, "cards: the game's cards (all home: won)");
        return -1;
    }
    self->cards = cards;
    self->move_action = move_action;
    self->deal_action = deal_action;
    self->ready = 1;
    return 0;
}

static PyObject *Searcher_is_lost(Searcher *self, PyObject *p) {
    if (!self->ready) {
        PyErr_SetString(PyExc_ValueError, "Searcher: not initialised");
        return NULL;
    }
    if (!PyTuple_Check(p) || PyTuple_GET_SIZE(p) != self->npiles) {
        PyErr_Format(PyExc_ValueError, "position: a tuple of %d bytes piles", self->npiles);
        return NULL;
    }
    for (int i = 0; i < self->npiles; i++) {
        if (!PyBytes_Check(PyTuple_GET_ITEM(p, i))) {
            PyErr_Format(PyExc_ValueError, "position: a tuple of %d bytes piles", self->npiles);
            return NULL;
        }
    }
    const uint8_t *pile[MAXPILES];
    int len[MAXPILES];
    for (int i = 0; i < self->npiles; i++) {
        PyObject *b = PyTuple_GET_ITEM(p, i);
        pile[i] = (const uint8_t *)PyBytes_AS_STRING(b);
        len[i] = PyBytes_GET_SIZE(b) > MAXCARDS ? MAXCARDS + 1 : (int)PyBytes_GET_SIZE(b);
    }
    int lost = lost_piles(self, pile, len);
    if (lost < 0) {
        frozen_error(self, -lost);
        return NULL;
    }
    return PyBool_FromLong(lost);
}

/* ---- the exhaustive depth-first search (forty_thieves.py _Dfs) --------------------- */

/* A position on the search's line, with its candidate moves and the next one to try. */
typedef struct {
    Pos pos;
    int32_t homes;
    int16_t back_s, back_t;  /* the move that would only undo the move that made it (-1: none) */
    uint32_t cand;           /* where its candidates start in DepthFirst.cands */
    uint16_t ncand, next;
    uint32_t steps;          /* where the moves that made it start in DepthFirst.steps */
    uint16_t nsteps;
} Frame;

typedef struct {
    PyObject_HEAD
    Searcher *kn;       /* a reference */
    PyObject *stock;    /* the root's stock (bytes; a reference) */
    Level L;            /* its kn, stock, homes_of (a reference), foundations' tables, thread */
    KeySet visited;
    Vec frames, cands, steps; /* Frame; Step: each frame's candidates; Step: the line's moves */
    int prune_lost;
    int result;         /* DFS_OPEN, or the outcome once decided */
    int running;        /* a run is under way (the GIL released) */
} DepthFirst;

enum { DFS_OPEN, DFS_SOLVED, DFS_UNSOLVABLE, DFS_PAUSED, DFS_ERROR };

/* lost_piles of a Pos (no Python call): 1 lost, 0 not, a read_frozen code negated. */
static int lost_pos_code(const Level *L, const Pos *p) {
    const Searcher *kn = L->kn;
    const uint8_t *pile[MAXPILES];
    int len[MAXPILES], at = 0;
    for (int i = 0; i < kn->npiles; i++) {
        len[i] = p->len[i];
        if (i == kn->stock) {
            pile[i] = L->stock;
            continue;
        }
        pile[i] = p->c + at;
        at += len[i];
    }
    return lost_piles(kn, pile, len);
}

static int lost_pos(const Level *L, const Pos *p) { return lost_pos_code(L, p) == 1; }

/* Pushes a frame for ``pos`` (its candidates none when lost). 0, or -1 out of memory. */
static int push_frame(DepthFirst *d, const Node *child, int lost) {
    if (vec_reserve(&d->frames, 1) || vec_reserve(&d->cands, MAXCAND)) return -1;
    Frame *f = (Frame *)d->frames.p + d->frames.len;
    f->pos = child->pos;
    f->homes = child->homes;
    f->back_s = child->back_s;
    f->back_t = child->back_t;
    f->cand = (uint32_t)d->cands.len;
    f->ncand = 0;
    if (!lost) {
        const Homes *h = (const Homes *)d->L.tables.p + child->homes;
        f->ncand = (uint16_t)candidates(&d->L, &child->pos, h, (Step *)d->cands.p + d->cands.len);
    }
    d->cands.len += f->ncand;
    f->next = 0;
    f->steps = (uint32_t)d->steps.len;
    f->nsteps = child->nsteps;
    d->frames.len++;
    return 0;
}

/* _Dfs._run (the GIL released): on until decided, or paused at the deadline or at
 * max_states positions. */
static int dfs_run(DepthFirst *d, double deadline, long long max_states) {
    const Searcher *kn = d->kn;
    Level *L = &d->L;
    Step steps[MAXCARDS + 1];
    uint8_t key[POSCARDS + MAXSTACKS + 2];
    if ((long long)keyset_count(&d->visited) >= max_states || now_seconds() > deadline) return DFS_PAUSED;
    long long tick = 0;
    while (d->frames.len) {
        Frame *top = (Frame *)d->frames.p + d->frames.len - 1;
        int pushed = 0;
        while (top->next < top->ncand) {
            Step m = ((const Step *)d->cands.p)[top->cand + top->next++];
            if (!m.deal && m.s == top->back_s && m.t == top->back_t) continue;
            Node child;
            child.pos = top->pos;
            child.homes = top->homes;
            int to_home, nsteps = make_child(L, &child, m, steps, &to_home);
            if (nsteps < 0) return DFS_ERROR;
            uint32_t kid;
            int added = keyset_add(&d->visited, key, pos_key(kn, &child.pos, key), &kid);
            if (added < 0) return DFS_ERROR;
            if (!added) continue;
            if (vec_reserve(&d->steps, (size_t)nsteps)) return DFS_ERROR;
            memcpy((Step *)d->steps.p + d->steps.len, steps, (size_t)nsteps * sizeof(Step));
            if (home_count(kn, &child.pos) == kn->cards) {
                if (push_frame(d, &child, 1)) return DFS_ERROR;
                d->steps.len += (size_t)nsteps;
                return DFS_SOLVED;
            }
            /* a lost position is a dead end: its line is popped at once */
            if (push_frame(d, &child, d->prune_lost && lost_pos(L, &child.pos))) return DFS_ERROR;
            d->steps.len += (size_t)nsteps;
            tick++;
            if ((long long)keyset_count(&d->visited) >= max_states || ((tick & 63) == 0 && now_seconds() > deadline))
                return DFS_PAUSED;
            pushed = 1;
            break;
        }
        if (!pushed) {
            top = (Frame *)d->frames.p + d->frames.len - 1;
            d->cands.len = top->cand;
            d->steps.len = top->steps;
            d->frames.len--;
        }
    }
    return DFS_UNSOLVABLE;
}

static void DepthFirst_dealloc(DepthFirst *d) {
    vec_free(&d->frames);
    vec_free(&d->cands);
    vec_free(&d->steps);
    if (d->visited.slots) keyset_free(&d->visited);
    if (d->L.kn) level_free(&d->L);
    Py_XDECREF(d->L.homes_of);
    Py_XDECREF(d->stock);
    Py_XDECREF(d->kn);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

static PyObject *DepthFirst_run(DepthFirst *d, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"deadline", "max_states", NULL};
    double deadline;
    long long max_states;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "dL", kw, &deadline, &max_states)) return NULL;
    if (d->running) {
        PyErr_SetString(PyExc_RuntimeError, "DepthFirst: already running");
        return NULL;
    }
    if (d->result == DFS_OPEN) {
        d->running = 1;
        d->L.failed = 0;
        d->L.thread = PyEval_SaveThread();
        int end = dfs_run(d, deadline, max_states);
        PyEval_RestoreThread(d->L.thread);
        d->running = 0;
        if (end == DFS_ERROR) {
            if (!d->L.failed) PyErr_NoMemory();
            return NULL;
        }
        if (end == DFS_PAUSED) Py_RETURN_NONE;
        d->result = end;
    }
    return PyUnicode_FromString(d->result == DFS_SOLVED ? "solved" : "unsolvable");
}

static PyObject *DepthFirst_moves(DepthFirst *d, PyObject *unused) {
    (void)unused;
    if (d->running) {
        PyErr_SetString(PyExc_RuntimeError, "DepthFirst: running");
        return NULL;
    }
    Vec *frames = &d->frames;
    PyObject *out = PyList_New(0);
    for (size_t i = 1; out && i < frames->len; i++) { /* the root's moves are the caller's */
        const Frame *f = (const Frame *)frames->p + i;
        PyObject *step = steps_of(d->kn, (const Step *)d->steps.p + f->steps, f->nsteps);
        if (!step || PyList_Append(out, step)) Py_CLEAR(out);
        Py_XDECREF(step);
    }
    return out;
}

static PyObject *DepthFirst_positions(DepthFirst *d, void *closure) {
    (void)closure;
    return PyLong_FromSize_t(keyset_count(&d->visited));
}

static PyMethodDef DepthFirst_methods[] = {
    {"run", (PyCFunction)(void (*)(void))DepthFirst_run, METH_VARARGS | METH_KEYWORDS,
     "run(deadline, max_states): _Dfs.run: 'solved' or 'unsolvable' once decided, None when paused."},
    {"moves", (PyCFunction)DepthFirst_moves, METH_NOARGS,
     "moves(): the steps of the line from the root (the winning one once solved)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef DepthFirst_getset[] = {
    {"positions", (getter)DepthFirst_positions, NULL, "positions visited so far (the root included)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject DepthFirstType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "service.solver.plugins._forty_thieves_native.DepthFirst",
    .tp_basicsize = sizeof(DepthFirst),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "forty_thieves.py's _Dfs, compiled: made by Searcher.depth_first.",
    .tp_dealloc = (destructor)DepthFirst_dealloc,
    .tp_methods = DepthFirst_methods,
    .tp_getset = DepthFirst_getset,
};

static PyObject *Searcher_depth_first(Searcher *self, PyObject *args, PyObject *kwds) {
    static char *kw[] = {"root", "homes_of", "prune_lost", NULL};
    PyObject *root, *homes_of;
    int prune_lost;
    if (!self->ready) {
        PyErr_SetString(PyExc_ValueError, "Searcher: not initialised");
        return NULL;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOp", kw, &root, &homes_of, &prune_lost)) return NULL;
    DepthFirst *d = PyObject_New(DepthFirst, &DepthFirstType);
    if (!d) return NULL;
    memset((char *)d + sizeof(PyObject), 0, sizeof(DepthFirst) - sizeof(PyObject));
    Py_INCREF(self);
    d->kn = self;
    d->prune_lost = prune_lost;
    d->frames.size = sizeof(Frame);
    d->cands.size = d->steps.size = sizeof(Step);
    if (level_init(&d->L, self) || keyset_init(&d->visited, 256)) {
        Py_DECREF(d);
        return PyErr_NoMemory();
    }
    Py_INCREF(homes_of);
    d->L.homes_of = homes_of;
    Node node;
    memset(&node, 0, sizeof node);
    node.back_s = node.back_t = -1;
    PyObject *stock = NULL;
    if (read_piles(&d->L, root, &stock, &node.pos)) {
        Py_DECREF(d);
        return NULL;
    }
    Py_INCREF(stock);
    d->stock = stock;
    d->L.stock = (const uint8_t *)PyBytes_AS_STRING(stock);
    d->L.nstock = (int)PyBytes_GET_SIZE(stock);
    int malformed = -lost_pos_code(&d->L, &node.pos);
    if (malformed > 0) { /* copies, foundations */
        frozen_error(self, malformed);
        Py_DECREF(d);
        return NULL;
    }
    uint8_t key[POSCARDS + MAXSTACKS + 2];
    uint32_t kid;
    d->L.thread = PyEval_SaveThread();
    node.homes = homes_index(&d->L, &node.pos);
    PyEval_RestoreThread(d->L.thread);
    if (node.homes < 0 || keyset_add(&d->visited, key, pos_key(self, &node.pos, key), &kid) < 0 ||
        push_frame(d, &node, 0)) {
        if (!d->L.failed) PyErr_NoMemory();
        Py_DECREF(d);
        return NULL;
    }
    return (PyObject *)d;
}

static PyMethodDef Searcher_methods[] = {
    {"is_lost", (PyCFunction)Searcher_is_lost, METH_O,
     "is_lost(piles): forty_thieves.py's is_lost (piles: a tuple of bytes in the game's layout)."},
    {"depth_first", (PyCFunction)(void (*)(void))Searcher_depth_first, METH_VARARGS | METH_KEYWORDS,
     "depth_first(root, homes_of, prune_lost): forty_thieves.py's _Dfs from root (its positions and moves, paused "
     "and resumed by run), a DepthFirst."},
    {"look_around", (PyCFunction)(void (*)(void))Searcher_look_around, METH_VARARGS | METH_KEYWORDS,
     "look_around(beam, homes_of, weights, budget, deadline, max_states, seen, count, tick): one stock level of "
     "forty_thieves.py's _BeamRun._look_around; (end, layer, deals found, deals as (key, entry) or None, the "
     "winning trail or None, the first won deal's index or -1, count, tick, whether positions were left "
     "unexpanded)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SearcherType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "service.solver.plugins._forty_thieves_native.Searcher",
    .tp_basicsize = sizeof(Searcher),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Forty Thieves' compiled search parts for one game (tables from forty_thieves.py).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Searcher_init,
    .tp_methods = Searcher_methods,
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_forty_thieves_native",
    "Forty Thieves' search parts, compiled (forty_thieves.py is the reference).", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__forty_thieves_native(void) {
    if (PyType_Ready(&DepthFirstType) < 0) return NULL; /* made only by Searcher.depth_first */
    PyObject *m = PyModule_Create(&moduledef);
    if (m && PyModule_AddType(m, &SearcherType) < 0) Py_CLEAR(m); /* readies the type, adds it as "Searcher" */
    return m;
}
