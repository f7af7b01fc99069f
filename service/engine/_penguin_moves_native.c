/* The Penguin family's legal moves, compiled: penguin.py's PenguinFamily.python_legal_moves,
 * move for move and in the same order.
 *
 * penguin.py stays the reference: it uses this when the module is built, and
 * tests/rules/test_penguin_round6.py compares both on every state of random playouts of
 * every preset and option mix, and on made-up and broken states. The rules come in as the
 * tables penguin.py builds from its rule parts (each base rank's tableau parents, their
 * inverse and what an empty pile takes; the run limits by free cells and empty piles; the
 * foundations' next cards), and the moves as penguin.py's own Move objects (every one-card
 * move ready-made, the Move type for runs), so no rule is restated here. A state is read
 * only when it is plain (an exact tuple or list of piles, each an exact tuple or list of
 * exact ints below SLOTS, as many piles as the layout has); anything else goes, before any
 * Python code has run, to the Python function.
 *
 * Module: service.engine._penguin_moves_native, one type, MoveLister.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define SLOTS 64      /* every card is below this (cards.py CARD_SLOTS) */
#define RANKS 13      /* base ranks 1..13 (cards.py ALL_RANKS) */
#define MAXPILES 32   /* foundations, cells and tableau piles, at most */
#define MAXCELLS 16
#define MAXTAB 16

typedef struct {
    PyObject_HEAD
    int f0, nf, c0, nc, t0, nt, npiles;
    int beak, ace;
    int8_t rank[SLOTS];                 /* cards.RANK_OF */
    int8_t next[SLOTS];                 /* cards.NEXT_IN_SUIT */
    int8_t parent[RANKS + 1][SLOTS];    /* by base rank: the tableau parent, -1 none */
    int8_t child[RANKS + 1][SLOTS];     /* by base rank: the parents' inverse, -1 none */
    int8_t empty_takes[RANKS + 1][SLOTS];  /* by base rank: 1 if an empty pile takes the card */
    int limit[MAXCELLS + 1][MAXTAB + 1][2]; /* by free cells, empty piles: onto a card, into a space */
    PyObject *state_type;   /* State: only its exact instances are read here */
    PyObject *one;          /* one[src][dst]: every one-card Move (a tuple of tuples) */
    PyObject *move_type;    /* Move, for the runs */
    PyObject *move_action;  /* Action.MOVE */
    PyObject *fallback;     /* the Python function, for a state not read plainly */
    PyObject *pile_ints[MAXPILES]; /* each pile index as an int object */
} MoveLister;

/* The objects a MoveLister holds, in the order MoveLister_init is given them. The fallback
 * is a bound method of the game that holds this lister's own bound method: a cycle, so
 * the type takes part in garbage collection. */
#define HELD(self) {&(self)->state_type, &(self)->one, &(self)->move_type, &(self)->move_action, &(self)->fallback}
#define NHELD 5

static int MoveLister_traverse(MoveLister *self, visitproc visit, void *arg) {
    PyObject **held[NHELD] = HELD(self);
    for (int i = 0; i < NHELD; i++) Py_VISIT(*held[i]);
    return 0;
}

static int MoveLister_clear(MoveLister *self) {
    PyObject **held[NHELD] = HELD(self);
    for (int i = 0; i < NHELD; i++) Py_CLEAR(*held[i]);
    return 0;
}

static void MoveLister_dealloc(MoveLister *self) {
    PyObject_GC_UnTrack(self);
    MoveLister_clear(self);
    for (int i = 0; i < MAXPILES; i++) Py_CLEAR(self->pile_ints[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A table of SLOTS small ints (or bools) into `out`; -1 and error unless it is one. */
static int read_table(PyObject *seq, int8_t *out, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (fast == NULL) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != SLOTS) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s: %d entries expected", what, SLOTS);
        return -1;
    }
    for (int i = 0; i < SLOTS; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        if (v < -1 || v >= SLOTS) {
            Py_DECREF(fast);
            PyErr_Format(PyExc_ValueError, "%s: entry %d out of range", what, i);
            return -1;
        }
        out[i] = (int8_t)v;
    }
    Py_DECREF(fast);
    return 0;
}

/* A per-base-rank table: a dict base -> SLOTS entries, for every base 1..13. */
static int read_by_base(PyObject *dict, int8_t out[RANKS + 1][SLOTS], const char *what) {
    if (!PyDict_Check(dict)) {
        PyErr_Format(PyExc_TypeError, "%s: a dict by base rank expected", what);
        return -1;
    }
    memset(out, -1, (RANKS + 1) * SLOTS);
    for (int base = 1; base <= RANKS; base++) {
        PyObject *key = PyLong_FromLong(base);
        if (key == NULL) return -1;
        PyObject *table = PyDict_GetItemWithError(dict, key);
        Py_DECREF(key);
        if (table == NULL) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: no table for base %d", what, base);
            return -1;
        }
        if (read_table(table, out[base], what) < 0) return -1;
    }
    return 0;
}

static int MoveLister_init(MoveLister *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"foundations", "cells", "tableau", "beak", "ace", "rank_of", "next_in_suit",
                             "parents", "children", "empty_takes", "run_limits", "state_type",
                             "one_card_moves", "move_type", "move_action", "fallback", NULL};
    PyObject *fr, *cr, *tr, *rank, *next, *parents, *children, *empty, *limits, *state_type, *one, *move_type,
        *action, *fallback;
    int beak, ace;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOpiOOOOOOOOOOO", kwlist, &fr, &cr, &tr, &beak, &ace, &rank,
                                     &next, &parents, &children, &empty, &limits, &state_type, &one, &move_type,
                                     &action, &fallback))
        return -1;
    PyObject *ranges[3] = {fr, cr, tr};
    int *starts[3] = {&self->f0, &self->c0, &self->t0}, *counts[3] = {&self->nf, &self->nc, &self->nt};
    for (int i = 0; i < 3; i++) { /* (start, count) of each group */
        int start, count;
        if (!PyArg_ParseTuple(ranges[i], "ii", &start, &count)) return -1;
        *starts[i] = start;
        *counts[i] = count;
    }
    self->npiles = self->t0 + self->nt;
    if (self->f0 != 0 || self->c0 != self->nf || self->t0 != self->c0 + self->nc || self->nc > MAXCELLS ||
        self->nt > MAXTAB || self->npiles > MAXPILES || self->nf < 0 || self->nc < 0 || self->nt < 0) {
        PyErr_SetString(PyExc_ValueError, "foundations, cells and tableau must follow one another, in bounds");
        return -1;
    }
    if (ace < 1 || ace > RANKS) {
        PyErr_SetString(PyExc_ValueError, "ace: a rank expected");
        return -1;
    }
    self->beak = beak;
    self->ace = ace;
    if (read_table(rank, self->rank, "rank_of") < 0 || read_table(next, self->next, "next_in_suit") < 0 ||
        read_by_base(parents, self->parent, "parents") < 0 || read_by_base(children, self->child, "children") < 0 ||
        read_by_base(empty, self->empty_takes, "empty_takes") < 0)
        return -1;
    /* run_limits[free][empty] = (onto a card, into a space), for every count the layout allows */
    PyObject *rows = PySequence_Fast(limits, "run_limits");
    if (rows == NULL) return -1;
    int ok = PySequence_Fast_GET_SIZE(rows) == self->nc + 1;
    for (int free = 0; ok && free <= self->nc; free++) {
        PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(rows, free), "run_limits");
        if (row == NULL) {
            Py_DECREF(rows);
            return -1;
        }
        ok = PySequence_Fast_GET_SIZE(row) == self->nt + 1;
        for (int empty = 0; ok && empty <= self->nt; empty++) {
            ok = PyArg_ParseTuple(PySequence_Fast_GET_ITEM(row, empty), "ii", &self->limit[free][empty][0],
                                  &self->limit[free][empty][1]);
        }
        Py_DECREF(row);
    }
    Py_DECREF(rows);
    if (!ok) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "run_limits: one row per free-cell count, one pair per empty-pile count");
        return -1;
    }
    /* one_card_moves[src][dst]: a tuple of npiles tuples of npiles moves */
    int shape = PyTuple_CheckExact(one) && PyTuple_GET_SIZE(one) == self->npiles;
    for (int s = 0; shape && s < self->npiles; s++) {
        PyObject *row = PyTuple_GET_ITEM(one, s);
        shape = PyTuple_CheckExact(row) && PyTuple_GET_SIZE(row) == self->npiles;
    }
    if (!shape) {
        PyErr_SetString(PyExc_ValueError, "one_card_moves: a tuple of one tuple of moves per pile expected");
        return -1;
    }
    if (!PyType_Check(state_type) || !PyCallable_Check(move_type) || !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "state_type must be a type, move_type and fallback callable");
        return -1;
    }
    PyObject **owned[NHELD] = HELD(self);
    PyObject *given[NHELD] = {state_type, one, move_type, action, fallback};
    for (int i = 0; i < NHELD; i++) {
        Py_INCREF(given[i]);
        Py_XSETREF(*owned[i], given[i]);
    }
    for (int i = 0; i < self->npiles; i++) {
        PyObject *index = PyLong_FromLong(i);
        if (index == NULL) return -1;
        Py_XSETREF(self->pile_ints[i], index);
    }
    return 0;
}

/* A card number in [0, SLOTS) when `obj` is one plainly (an exact int), else -1: read
 * from the int's one digit, without a call (this runs for every card of a state). */
static inline int plain_card(PyObject *obj) {
    if (!PyLong_CheckExact(obj)) return -1;
#if PY_VERSION_HEX >= 0x030C0000
    if (!PyUnstable_Long_IsCompact((PyLongObject *)obj)) return -1;
    Py_ssize_t v = PyUnstable_Long_CompactValue((PyLongObject *)obj);
#else
    Py_ssize_t size = Py_SIZE(obj);
    if (size < 0 || size > 1) return -1;
    Py_ssize_t v = size ? (Py_ssize_t)((PyLongObject *)obj)->ob_digit[0] : 0;
#endif
    return (v >= 0 && v < SLOTS) ? (int)v : -1;
}

/* Pile `i` of a plain state's piles (checked by plain_piles). */
#define PILE(piles, i) (PyTuple_CheckExact(piles) ? PyTuple_GET_ITEM(piles, i) : PyList_GET_ITEM(piles, i))
#define PILE_LEN(p) Py_SIZE(p)
#define PILE_ITEMS(p) PySequence_Fast_ITEMS(p) /* an exact list or tuple: its items, in place (public API) */

/* The state's piles as card numbers into `cards` (pile i's at cards + start[i], len[i] of
 * them), or -1 when the state is not plain. A State is a tuple, its piles item 0. */
static int plain_piles(const MoveLister *self, PyObject *state, int8_t *cards, int *start, int *len) {
    if ((PyObject *)Py_TYPE(state) != self->state_type || PyTuple_GET_SIZE(state) < 1) return -1;
    PyObject *piles = PyTuple_GET_ITEM(state, 0);
    if (!(PyTuple_CheckExact(piles) || PyList_CheckExact(piles)) || Py_SIZE(piles) != self->npiles) return -1;
    int at = 0;
    for (int i = 0; i < self->npiles; i++) {
        PyObject *pile = PILE(piles, i);
        if (!(PyTuple_CheckExact(pile) || PyList_CheckExact(pile))) return -1;
        Py_ssize_t n = PILE_LEN(pile);
        if (n > SLOTS || at + n > 4 * SLOTS) return -1;
        PyObject **items = PILE_ITEMS(pile);
        start[i] = at;
        len[i] = (int)n;
        for (Py_ssize_t k = 0; k < n; k++) {
            int card = plain_card(items[k]);
            if (card < 0) return -1;
            cards[at++] = (int8_t)card;
        }
    }
    return 0;
}

static int append_one(PyObject *moves, PyObject *from_row, int dst) {
    return PyList_Append(moves, PyTuple_GET_ITEM(from_row, dst));
}

/* Move(MOVE, src, dst, count): a run's move, made as the Python function makes it. */
static int append_run(MoveLister *self, PyObject *moves, int src, int dst, int count) {
    PyObject *k = PyLong_FromLong(count);
    if (k == NULL) return -1;
    PyObject *args[4] = {self->move_action, self->pile_ints[src], self->pile_ints[dst], k};
    PyObject *move = PyObject_Vectorcall(self->move_type, args, 4, NULL);
    Py_DECREF(k);
    if (move == NULL) return -1;
    int r = PyList_Append(moves, move);
    Py_DECREF(move);
    return r;
}

/* PenguinFamily.python_legal_moves, step for step (its comments say why each step is there). */
static PyObject *MoveLister_legal_moves(MoveLister *self, PyObject *state) {
    int8_t cards[4 * SLOTS];
    int start[MAXPILES], len[MAXPILES];
    if (self->state_type == NULL || self->one == NULL || self->fallback == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "MoveLister: not initialised");
        return NULL;
    }
    if (plain_piles(self, state, cards, start, len) < 0)
        return PyObject_CallOneArg(self->fallback, state);
#define TOP(i) cards[start[i] + len[i] - 1]
#define AT(i, k) cards[start[i] + (k)] /* the k-th card from the bottom */
    int base = self->ace;
    if (self->beak && len[self->f0]) {
        base = self->rank[AT(self->f0, 0)];
        if (base < 1) return PyObject_CallOneArg(self->fallback, state); /* not a card: as Python answers */
    }
    const int8_t *parent = self->parent[base], *child = self->child[base], *empty_takes = self->empty_takes[base];
    const int8_t *rank = self->rank;
    /* home[card]: the foundation whose next card it is; onto[card]: the tableau pile whose
     * top card takes it; -1 none (a later pile wins, as in a dict) */
    int8_t home[SLOTS], onto[SLOTS];
    memset(home, -1, sizeof home);
    memset(onto, -1, sizeof onto);
    int open_f[MAXPILES], nopen = 0, empty[MAXTAB], nempty = 0, free_c[MAXCELLS], nfree = 0;
    for (int f = self->f0; f < self->f0 + self->nf; f++) {
        if (!len[f]) open_f[nopen++] = f;
        else if (len[f] < 13 && self->next[TOP(f)] >= 0) home[(int)self->next[TOP(f)]] = (int8_t)f;
    }
    for (int t = self->t0; t < self->t0 + self->nt; t++) {
        if (!len[t]) empty[nempty++] = t;
        else if (child[TOP(t)] >= 0) onto[(int)child[TOP(t)]] = (int8_t)t;
    }
    PyObject *moves = PyList_New(0);
    if (moves == NULL) return NULL;
    PyObject *one = self->one;
    for (int c = self->c0; c < self->c0 + self->nc; c++) {
        if (!len[c]) {
            free_c[nfree++] = c;
            continue;
        }
        int card = AT(c, 0);
        PyObject *from_c = PyTuple_GET_ITEM(one, c);
        if (home[card] >= 0) {
            if (append_one(moves, from_c, home[card]) < 0) goto error;
        } else if (rank[card] == base) {
            for (int i = 0; i < nopen; i++)
                if (append_one(moves, from_c, open_f[i]) < 0) goto error;
        }
        if (onto[card] >= 0 && append_one(moves, from_c, onto[card]) < 0) goto error;
        if (nempty && empty_takes[card]) {
            for (int i = 0; i < nempty; i++)
                if (append_one(moves, from_c, empty[i]) < 0) goto error;
        }
    }
    int limit_onto = self->limit[nfree][nempty][0], limit_empty = self->limit[nfree][nempty][1];
    for (int s = self->t0; s < self->t0 + self->nt; s++) {
        int n = len[s];
        if (!n) continue;
        PyObject *from_s = PyTuple_GET_ITEM(one, s);
        int card = TOP(s);
        if (home[card] >= 0) {
            if (append_one(moves, from_s, home[card]) < 0) goto error;
        } else if (nopen && rank[card] == base) {
            for (int i = 0; i < nopen; i++)
                if (append_one(moves, from_s, open_f[i]) < 0) goto error;
        }
        for (int i = 0; i < nfree; i++)
            if (append_one(moves, from_s, free_c[i]) < 0) goto error;
        if (onto[card] >= 0 && onto[card] != s && append_one(moves, from_s, onto[card]) < 0) goto error;
        int run = 1;
        while (run < limit_onto && run < n && parent[(int)AT(s, n - run)] == AT(s, n - run - 1)) {
            run++;
            int bottom = AT(s, n - run);
            if (onto[bottom] >= 0 && onto[bottom] != s && append_run(self, moves, s, onto[bottom], run) < 0)
                goto error;
        }
        if (nempty) {
            int most = run < limit_empty ? run : limit_empty;
            if (most > n - 1) most = n - 1;
            for (int k = 1; k <= most; k++) {
                if (!empty_takes[(int)AT(s, n - k)]) continue;
                for (int i = 0; i < nempty; i++) {
                    if ((k == 1 ? append_one(moves, from_s, empty[i]) : append_run(self, moves, s, empty[i], k)) < 0)
                        goto error;
                }
            }
        }
    }
    return moves;
error:
    Py_DECREF(moves);
    return NULL;
#undef TOP
#undef AT
}

static PyMethodDef MoveLister_methods[] = {
    {"legal_moves", (PyCFunction)MoveLister_legal_moves, METH_O,
     "legal_moves(state) -> list of moves: PenguinFamily.python_legal_moves(state), compiled."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MoveListerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "service.engine._penguin_moves_native.MoveLister",
    .tp_doc = "One Penguin-family game's legal moves, from the tables penguin.py builds.",
    .tp_basicsize = sizeof(MoveLister),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = (traverseproc)MoveLister_traverse,
    .tp_clear = (inquiry)MoveLister_clear,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)MoveLister_init,
    .tp_dealloc = (destructor)MoveLister_dealloc,
    .tp_methods = MoveLister_methods,
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_penguin_moves_native",
    "The Penguin family's legal moves, compiled (penguin.py's python_legal_moves is the reference).", -1, NULL,
};

PyMODINIT_FUNC PyInit__penguin_moves_native(void) {
    PyObject *m = PyModule_Create(&moduledef);
    if (m && PyModule_AddType(m, &MoveListerType) < 0) Py_CLEAR(m); /* readies the type, adds it as "MoveLister" */
    return m;
}
