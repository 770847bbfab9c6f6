/* SPDX-License-Identifier: BSD-2-Clause */
/* The reference flow's .te_inst_raw files: per packet one header byte (msg_type << 5) | length
 * then the payload (VERSIONS.md C.6) - the packet encapsulation with flow = msg_type and no
 * srcID, timestamp or type. The file is memory-mapped; payloads point into the mapping. */
#include "tracekit/encap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct tk_te_raw {
    tk_encap_reader *rd;
    void *map;
    size_t map_len;
    char *path; /* NULL for buffers */
    const uint8_t *buf;
    size_t len;
};

static tk_status make(const uint8_t *buf, size_t len, tk_te_raw **out)
{
    tk_te_raw *r = calloc(1, sizeof(*r));
    if (!r)
        return TK_ERR_NOMEM;
    tk_encap_config cfg;
    tk_encap_config_init(&cfg);
    cfg.report_nulls = true; /* the reference never writes them: report as damage */
    tk_status st = tk_encap_reader_alloc(&r->rd, &cfg, buf, len);
    if (st != TK_OK) {
        free(r);
        return st;
    }
    r->buf = buf;
    r->len = len;
    *out = r;
    return TK_OK;
}

tk_status tk_te_raw_from_buffer(const uint8_t *buf, size_t len, tk_te_raw **out)
{
    if (!out || (!buf && len))
        return TK_ERR_INVALID;
    *out = NULL;
    return make(buf, len, out);
}

tk_status tk_te_raw_open(const char *path, tk_te_raw **out, tk_diag *diag)
{
    if (!path || !out)
        return tk_diag_set(diag, TK_ERR_INVALID, "tk_te_raw_open: NULL argument");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tk_diag_set(diag, TK_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return tk_diag_set(diag, TK_ERR_IO, "%s: not a regular file", path);
    }
    size_t len = (size_t)st.st_size;
    void *map = NULL;
    if (len) {
        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            int e = errno;
            close(fd);
            return tk_diag_set(diag, TK_ERR_IO, "%s: cannot map: %s", path, strerror(e));
        }
    }
    close(fd);
    tk_te_raw *r = NULL;
    tk_status s = make(map, len, &r);
    if (s == TK_OK && !(r->path = strdup(path)))
        s = TK_ERR_NOMEM;
    if (s != TK_OK) {
        if (r)
            tk_te_raw_close(r);
        else if (map)
            munmap(map, len);
        return tk_diag_set(diag, s, "%s: %s", path, tk_strerror(s));
    }
    r->map = map;
    r->map_len = len;
    *out = r;
    return TK_OK;
}

void tk_te_raw_close(tk_te_raw *r)
{
    if (!r)
        return;
    tk_encap_reader_free(r->rd);
    if (r->map)
        munmap(r->map, r->map_len);
    free(r->path);
    free(r);
}

uint64_t tk_te_raw_size(const tk_te_raw *r)
{
    return r ? r->len : 0;
}

const uint8_t *tk_te_raw_data(const tk_te_raw *r)
{
    return r ? r->buf : NULL;
}

void tk_te_raw_release(tk_te_raw *r, uint64_t offset)
{
    if (!r || !r->map)
        return;
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    const uint64_t upto = (offset < r->map_len ? offset : r->map_len) / page * page;
    if (upto > 0)
        madvise(r->map, (size_t)upto, MADV_DONTNEED);
}

/* Prefix the file name to the reader's message. */
static tk_status with_path(const tk_te_raw *r, tk_status st, tk_diag *diag)
{
    if (diag && r->path) {
        char msg[sizeof(diag->message)];
        memcpy(msg, diag->message, sizeof(msg));
        tk_diag_set(diag, st, "%s: %s", r->path, msg);
    }
    return st;
}

tk_status tk_te_raw_next(tk_te_raw *r, tk_te_raw_packet *pkt, tk_diag *diag)
{
    if (!r || !pkt)
        return TK_ERR_INVALID;
    tk_encap_packet ep;
    tk_status st = tk_encap_reader_next(r->rd, &ep, diag);
    if (st == TK_END)
        return st;
    if (st != TK_OK) {
        pkt->offset = diag ? diag->byte_offset : 0;
        return with_path(r, st, diag);
    }
    pkt->offset = ep.offset;
    pkt->index = ep.index;
    pkt->msg_type = ep.flow;
    pkt->payload = ep.payload;
    pkt->len = ep.payload_len;
    if (ep.is_null) {
        /* A zero length byte: the reference writes at least one payload byte. */
        tk_diag_set(diag, TK_ERR_BAD_PACKET,
                    "offset %llu (packet %llu): header 0x%02x has length 0 (skipped 1 byte)",
                    (unsigned long long)ep.offset, (unsigned long long)ep.index,
                    (unsigned)(ep.flow << 5 | ep.extend << 7));
        if (diag) {
            diag->byte_offset = ep.offset;
            diag->packet_index = ep.index;
        }
        return with_path(r, TK_ERR_BAD_PACKET, diag);
    }
    return TK_OK;
}

tk_status tk_te_raw_write(FILE *out, uint8_t msg_type, const uint8_t *payload, size_t len)
{
    if (!out || !payload || len == 0 || len > TK_ENCAP_MAX_LENGTH || msg_type > 3)
        return TK_ERR_INVALID;
    uint8_t header = (uint8_t)((msg_type << 5) | len);
    if (fputc(header, out) == EOF || fwrite(payload, 1, len, out) != len)
        return TK_ERR_IO;
    return TK_OK;
}
