/* SPDX-License-Identifier: BSD-2-Clause */
/* Routing of encapsulated packets to per-source sinks by srcID. */
#include "tracekit/encap.h"

#include <stdlib.h>

typedef struct route {
    uint16_t srcid;
    tk_encap_sink fn;
    void *ctx;
} route;

struct tk_encap_demux {
    route *routes;
    size_t n, cap;
    size_t last; /* index of the last route used: streams come in bursts from one source */
    tk_encap_sink dflt;
    void *dflt_ctx;
    uint64_t dropped;
};

tk_status tk_encap_demux_alloc(tk_encap_demux **out)
{
    if (!out)
        return TK_ERR_INVALID;
    *out = calloc(1, sizeof(**out));
    return *out ? TK_OK : TK_ERR_NOMEM;
}

void tk_encap_demux_free(tk_encap_demux *d)
{
    if (!d)
        return;
    free(d->routes);
    free(d);
}

tk_status tk_encap_demux_route(tk_encap_demux *d, uint16_t srcid, tk_encap_sink fn, void *ctx)
{
    if (!d || !fn)
        return TK_ERR_INVALID;
    for (size_t i = 0; i < d->n; i++)
        if (d->routes[i].srcid == srcid) {
            d->routes[i].fn = fn;
            d->routes[i].ctx = ctx;
            return TK_OK;
        }
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 8;
        route *nr = realloc(d->routes, cap * sizeof(*nr));
        if (!nr)
            return TK_ERR_NOMEM;
        d->routes = nr;
        d->cap = cap;
    }
    d->routes[d->n++] = (route){srcid, fn, ctx};
    return TK_OK;
}

void tk_encap_demux_default(tk_encap_demux *d, tk_encap_sink fn, void *ctx)
{
    if (!d)
        return;
    d->dflt = fn;
    d->dflt_ctx = ctx;
}

tk_status tk_encap_demux_dispatch(tk_encap_demux *d, const tk_encap_packet *pkt)
{
    if (!d || !pkt)
        return TK_ERR_INVALID;
    if (pkt->is_null)
        return TK_OK;
    if (d->last < d->n && d->routes[d->last].srcid == pkt->srcid)
        return d->routes[d->last].fn(d->routes[d->last].ctx, pkt);
    for (size_t i = 0; i < d->n; i++)
        if (d->routes[i].srcid == pkt->srcid) {
            d->last = i;
            return d->routes[i].fn(d->routes[i].ctx, pkt);
        }
    if (d->dflt)
        return d->dflt(d->dflt_ctx, pkt);
    d->dropped++;
    return TK_OK;
}

tk_status tk_encap_demux_run(tk_encap_demux *d, tk_encap_reader *r, tk_diag *diag)
{
    if (!d || !r)
        return TK_ERR_INVALID;
    tk_encap_packet pkt;
    tk_status st;
    while ((st = tk_encap_reader_next(r, &pkt, diag)) == TK_OK) {
        st = tk_encap_demux_dispatch(d, &pkt);
        if (st != TK_OK) {
            if (diag && diag->status == TK_OK) {
                tk_diag_set(diag, st, "offset %llu (packet %llu, srcID %u): sink failed: %s",
                            (unsigned long long)pkt.offset, (unsigned long long)pkt.index,
                            pkt.srcid, tk_strerror(st));
                diag->byte_offset = pkt.offset;
                diag->packet_index = pkt.index;
            }
            return st;
        }
    }
    return st == TK_END ? TK_OK : st;
}

uint64_t tk_encap_demux_dropped(const tk_encap_demux *d)
{
    return d ? d->dropped : 0;
}
