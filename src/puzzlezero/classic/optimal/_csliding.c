/* IDA* over additive pattern databases for the sliding-tile puzzles: the compiled kernel.
 *
 * The same algorithm and the same resumable protocol as the numba kernel in _sliding_nb.py (see
 * sliding_ida.py and ida.py), in C so that a one-shot `puzzlezero solve puzzle15 ... --search optimal`
 * pays neither numba's import nor its first-call set-up (about 0.8 s together, most of a solve).
 * numba stays the fallback when this extension was not compiled.
 *
 * All arrays are C-contiguous int64 except the table (uint8); sliding_ida.py checks that before the
 * call. The kernel releases the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef int64_t i64;

#define MAX_GROUPS 16
#define MAX_CELLS 64
#define FOUND 1
#define DONE 0
#define PAUSED (-1)

typedef struct {
    i64 *board, *pos, *lk_val, *sums, *saved, *kid_val, *kid_h, *path, *nxt, *ctx;
    const i64 *nbr, *lk_off, *lk_k, *lk_tiles, *lk_cells, *tile_lk;
    const uint8_t *table;
    i64 n, groups, kmax;
} Search;

/* Rank of the positions q[0..k-1] (distinct, in [0, n)): see perm.py. */
static inline i64 rank(const i64 *q, i64 k, i64 n) {
    i64 r = 0;
    for (i64 i = 0; i < k; i++) {
        i64 d = q[i];
        for (i64 j = 0; j < i; j++)
            if (q[j] < q[i]) d--;
        r = r * (n - i) + d;
    }
    return r;
}

/* Heuristics of the children of the node at depth d (kid_h[d][j] == -1: no such move). */
static void expand(Search *s, i64 d) {
    const i64 n = s->n, G = s->groups;
    const i64 b = s->pos[0];
    i64 q[MAX_CELLS];
    i64 idx[4][MAX_GROUPS];
    i64 *kid_h = s->kid_h + d * 4;
    for (int j = 0; j < 4; j++) {
        i64 c = s->nbr[b * 4 + j];
        if (c < 0 || (d > 0 && j == (s->path[d - 1] ^ 1))) {
            kid_h[j] = -1;
            continue;
        }
        kid_h[j] = 0;
        i64 t = s->board[c];
        s->pos[t] = b; /* the tile slides into the blank */
        for (i64 g = 0; g < G; g++) {
            i64 lk = s->tile_lk[g * n + t];
            i64 k = s->lk_k[lk];
            const i64 *tiles = s->lk_tiles + lk * s->kmax;
            const i64 *cells = s->lk_cells + lk * n;
            for (i64 i = 0; i < k; i++) q[i] = cells[s->pos[tiles[i]]];
            idx[j][g] = s->lk_off[lk] + rank(q, k, n);
        }
        s->pos[t] = c;
    }
    for (int j = 0; j < 4; j++) { /* all reads together: their cache misses overlap */
        if (kid_h[j] < 0) continue;
        i64 t = s->board[s->nbr[b * 4 + j]];
        i64 best = 0;
        i64 *kv = s->kid_val + (d * 4 + j) * G;
        for (i64 g = 0; g < G; g++) {
            i64 v = s->table[idx[j][g]];
            kv[g] = v;
            i64 h = s->sums[g] + v - s->lk_val[s->tile_lk[g * n + t]];
            if (h > best) best = h;
        }
        kid_h[j] = best;
    }
}

/* Slide the tile at cell c into the blank; its lookups take new_val (old values to saved[d]). */
static inline void slide(Search *s, i64 d, i64 c, const i64 *new_val) {
    const i64 n = s->n, G = s->groups;
    i64 b = s->pos[0];
    i64 t = s->board[c];
    s->board[b] = t;
    s->pos[t] = b;
    s->board[c] = 0;
    s->pos[0] = c;
    for (i64 g = 0; g < G; g++) {
        i64 lk = s->tile_lk[g * n + t];
        i64 old = s->lk_val[lk];
        s->sums[g] += new_val[g] - old;
        s->lk_val[lk] = new_val[g];
        s->saved[d * G + g] = old;
    }
}

static int run(Search *s, i64 budget) {
    const i64 G = s->groups;
    i64 back[MAX_GROUPS];
    i64 d = s->ctx[0], bound = s->ctx[1], next_bound = s->ctx[2], nodes = 0;
    int code = PAUSED;
    while (nodes < budget) {
        i64 j = s->nxt[d];
        if (j < 0) {
            expand(s, d);
            j = 0;
        }
        if (j == 4) { /* all moves tried: back up */
            if (d == 0) {
                code = DONE;
                break;
            }
            d--;
            memcpy(back, s->saved + d * G, sizeof(i64) * G);
            slide(s, d, s->nbr[s->pos[0] * 4 + (s->path[d] ^ 1)], back);
            continue;
        }
        s->nxt[d] = j + 1;
        i64 h = s->kid_h[d * 4 + j];
        if (h < 0) continue;
        nodes++;
        i64 f = d + 1 + h;
        if (f > bound) {
            if (f < next_bound) next_bound = f;
            continue;
        }
        slide(s, d, s->nbr[s->pos[0] * 4 + j], s->kid_val + (d * 4 + j) * G);
        s->path[d] = j;
        d++;
        s->nxt[d] = -1;
        if (h == 0) { /* every tile is in some pattern: h == 0 only at the goal */
            code = FOUND;
            break;
        }
    }
    s->ctx[0] = d;
    s->ctx[2] = next_bound;
    s->ctx[3] += nodes;
    return code;
}

#define N_ARRAYS 17

static PyObject *py_run(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf[N_ARRAYS];
    long long budget, n, groups, kmax;
    memset(buf, 0, sizeof(buf));
    /* board pos lk_val sums saved kid_val kid_h path nxt ctx | nbr table lk_off lk_k lk_tiles lk_cells tile_lk */
    if (!PyArg_ParseTuple(args, "w*w*w*w*w*w*w*w*w*w*Ly*y*y*y*y*y*y*LLL", &buf[0], &buf[1], &buf[2],
                          &buf[3], &buf[4], &buf[5], &buf[6], &buf[7], &buf[8], &buf[9], &budget, &buf[10],
                          &buf[11], &buf[12], &buf[13], &buf[14], &buf[15], &buf[16], &n, &groups, &kmax))
        return NULL;
    PyObject *out = NULL;
    if (groups < 1 || groups > MAX_GROUPS || n < 4 || n > MAX_CELLS || kmax < 1 || kmax > n) {
        PyErr_SetString(PyExc_ValueError, "sliding kernel: bad board or pattern sizes");
        goto done;
    }
    if (buf[0].len != n * 8 || buf[1].len != n * 8 || buf[10].len != n * 4 * 8 || buf[16].len != groups * n * 8 ||
        buf[3].len != groups * 8 || buf[9].len != 4 * 8) {
        PyErr_SetString(PyExc_ValueError, "sliding kernel: arrays do not match the board (int64 expected)");
        goto done;
    }
    Search s = {
        .board = buf[0].buf, .pos = buf[1].buf, .lk_val = buf[2].buf, .sums = buf[3].buf,
        .saved = buf[4].buf, .kid_val = buf[5].buf, .kid_h = buf[6].buf, .path = buf[7].buf,
        .nxt = buf[8].buf, .ctx = buf[9].buf, .nbr = buf[10].buf, .table = buf[11].buf,
        .lk_off = buf[12].buf, .lk_k = buf[13].buf, .lk_tiles = buf[14].buf, .lk_cells = buf[15].buf,
        .tile_lk = buf[16].buf, .n = n, .groups = groups, .kmax = kmax,
    };
    int code;
    Py_BEGIN_ALLOW_THREADS
    code = run(&s, budget);
    Py_END_ALLOW_THREADS
    out = PyLong_FromLong(code);
done:
    for (int i = 0; i < N_ARRAYS; i++)
        if (buf[i].obj) PyBuffer_Release(&buf[i]);
    return out;
}

static PyMethodDef methods[] = {
    {"run", py_run, METH_VARARGS,
     "run(board, pos, lk_val, sums, saved, kid_val, kid_h, path, nxt, ctx, budget, nbr, table, lk_off, "
     "lk_k, lk_tiles, lk_cells, tile_lk, n, groups, kmax) -> int: resume one IDA* iteration for at most "
     "`budget` generated nodes; returns 1 (found), 0 (iteration done) or -1 (budget spent)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_csliding", "Compiled IDA* kernel for the sliding-tile puzzles.", -1, methods,
};

PyMODINIT_FUNC PyInit__csliding(void) { return PyModule_Create(&module); }
