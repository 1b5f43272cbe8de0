/* A counter threads wait on (mutex + condition variable): tests hand over between threads by
 * waiting for an observable count, never by sleeping. */
#ifndef FERRY_TESTS_COMPAT_RT_GATE_H
#define FERRY_TESTS_COMPAT_RT_GATE_H

#include <pthread.h>

typedef struct {
    pthread_mutex_t mutex;
    pthread_cond_t changed;
    int count;
} gate_t;

static inline void gate_init(gate_t* g) {
    pthread_mutex_init(&g->mutex, NULL);
    pthread_cond_init(&g->changed, NULL);
    g->count = 0;
}

static inline void gate_destroy(gate_t* g) {
    pthread_cond_destroy(&g->changed);
    pthread_mutex_destroy(&g->mutex);
}

static inline void gate_add(gate_t* g, int n) {
    pthread_mutex_lock(&g->mutex);
    g->count += n;
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->mutex);
}

static inline int gate_count(gate_t* g) {
    pthread_mutex_lock(&g->mutex);
    const int count = g->count;
    pthread_mutex_unlock(&g->mutex);
    return count;
}

/* Blocks until the count reaches `target` (a missed hand-over hangs: the test's timeout says so).
 */
static inline void gate_wait(gate_t* g, int target) {
    pthread_mutex_lock(&g->mutex);
    while (g->count < target) {
        pthread_cond_wait(&g->changed, &g->mutex);
    }
    pthread_mutex_unlock(&g->mutex);
}

#endif
