/* engine.h: what the engine's two files share (engine.c walks the graph and
 * orders streams; engine_grads.c checks, sums and hands out gradients and
 * runs the hooks and formulas of one node). Internal to csrc/autograd/. */
#ifndef PCS_AUTOGRAD_ENGINE_H
#define PCS_AUTOGRAD_ENGINE_H

#include "autograd/autograd.h"

typedef struct {
    int device;
    cudaStream_t stream;
} dev_stream;

typedef struct {
    uint64_t id;
    bool create_graph, keep_graph, accumulate;
    /* nodes reached (strong refs, for cleanup) */
    PcsNode **nodes;
    int n_nodes, cap_nodes;
    /* ready heap, latest seq first */
    PcsNode **heap;
    int n_heap;
    /* requested inputs */
    int n_in;
    PcsTensor **in_t;   /* borrowed from the inputs tuple (NULL: a GradientEdge) */
    pcs_edge *in_edge;  /* strong */
    PyObject **captured;
    /* streams */
    dev_stream caller[8];
    int n_caller;
    dev_stream used[32];
    int n_used;
    bool too_many_streams;
} run_state;

extern bool pcs_eng_use_cformulas;

/* engine.c */
cudaStream_t pcs_eng_caller_stream(run_state *st, int device);
int pcs_eng_stream_wait(int device, cudaStream_t consumer, cudaStream_t producer);

/* engine_grads.c */
int pcs_eng_send(run_state *st, pcs_edge *e, PyObject *g, cudaStream_t s);
bool pcs_eng_is_target(run_state *st, PcsNode *n);
int pcs_eng_run_accumulate(run_state *st, PcsNode *n);
int pcs_eng_before_node(run_state *st, PcsNode *n);
int pcs_eng_run_node(PcsNode *n, PyObject **grads);

#endif
