/* SPDX-License-Identifier: BSD-2-Clause */
/* Memory images for the CoreSight flow decoders: sorted, non-overlapping byte regions. A
 * one-entry cache of the last region hit makes the common sequential lookups O(1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/coresight.h"

typedef struct region {
    uint64_t addr;
    size_t len;
    uint8_t *data;
} region;

struct tk_cs_mem {
    region *r;
    size_t n, cap;
};

tk_status tk_cs_mem_new(tk_cs_mem **out)
{
    *out = calloc(1, sizeof(**out));
    return *out ? TK_OK : TK_ERR_NOMEM;
}

void tk_cs_mem_free(tk_cs_mem *mem)
{
    if (!mem)
        return;
    for (size_t i = 0; i < mem->n; i++)
        free(mem->r[i].data);
    free(mem->r);
    free(mem);
}

size_t tk_cs_mem_nregions(const tk_cs_mem *mem)
{
    return mem->n;
}

/* Insert one region that overlaps nothing already present, keeping the array sorted. */
static tk_status insert(tk_cs_mem *mem, uint64_t addr, const uint8_t *data, size_t len)
{
    if (!len)
        return TK_OK;
    if (mem->n == mem->cap) {
        size_t cap = mem->cap ? mem->cap * 2 : 8;
        region *r = realloc(mem->r, cap * sizeof(*r));
        if (!r)
            return TK_ERR_NOMEM;
        mem->r = r;
        mem->cap = cap;
    }
    uint8_t *copy = malloc(len);
    if (!copy)
        return TK_ERR_NOMEM;
    memcpy(copy, data, len);
    size_t i = mem->n;
    while (i > 0 && mem->r[i - 1].addr > addr) {
        mem->r[i] = mem->r[i - 1];
        i--;
    }
    mem->r[i] = (region){addr, len, copy};
    mem->n++;
    return TK_OK;
}

tk_status tk_cs_mem_add(tk_cs_mem *mem, uint64_t addr, const uint8_t *data, size_t len)
{
    if (!mem || (!data && len))
        return TK_ERR_INVALID;
    if (len && addr + (len - 1) < addr)
        return TK_ERR_OVERFLOW;
    /* Split the new region around existing ones: earlier regions win. */
    while (len) {
        size_t avail;
        if (tk_cs_mem_ptr(mem, addr, &avail)) {
            if (avail >= len)
                return TK_OK;
            addr += avail;
            data += avail;
            len -= avail;
            continue;
        }
        /* Free gap from addr up to the next region. */
        size_t take = len;
        for (size_t i = 0; i < mem->n; i++)
            if (mem->r[i].addr > addr) {
                if (mem->r[i].addr - addr < take)
                    take = (size_t)(mem->r[i].addr - addr);
                break;
            }
        tk_status st = insert(mem, addr, data, take);
        if (st)
            return st;
        addr += take;
        data += take;
        len -= take;
    }
    return TK_OK;
}

tk_status tk_cs_mem_add_file(tk_cs_mem *mem, uint64_t addr, const char *path, uint64_t offset,
                             uint64_t len, tk_diag *diag)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tk_diag_set(diag, TK_ERR_IO, "cannot open memory image %s", path);
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return tk_diag_set(diag, TK_ERR_IO, "cannot seek in %s", path);
    }
    long size = ftell(f);
    if (size < 0 || (uint64_t)size < offset) {
        fclose(f);
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: offset 0x%llx beyond the file", path,
                           (unsigned long long)offset);
    }
    uint64_t n = (uint64_t)size - offset;
    if (len && len < n)
        n = len;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        fclose(f);
        return TK_ERR_NOMEM;
    }
    tk_status st = TK_OK;
    if (fseek(f, (long)offset, SEEK_SET) != 0 || fread(buf, 1, n, f) != n)
        st = tk_diag_set(diag, TK_ERR_IO, "cannot read %s", path);
    fclose(f);
    if (!st)
        st = tk_cs_mem_add(mem, addr, buf, n);
    free(buf);
    return st;
}

const uint8_t *tk_cs_mem_ptr(const tk_cs_mem *mem, uint64_t addr, size_t *avail)
{
    size_t lo = 0, hi = mem->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const region *r = &mem->r[mid];
        if (addr < r->addr)
            hi = mid;
        else if (addr - r->addr >= r->len)
            lo = mid + 1;
        else {
            *avail = r->len - (size_t)(addr - r->addr);
            return r->data + (addr - r->addr);
        }
    }
    *avail = 0;
    return NULL;
}
