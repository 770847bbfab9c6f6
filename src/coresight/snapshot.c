/* SPDX-License-Identifier: BSD-2-Clause */
/* DS-5 snapshot directories (the layout OpenCSD's test snapshots use):
 *   snapshot.ini  [device_list] deviceN=<file.ini>   [trace] metadata=<trace.ini>
 *   <device>.ini  [device] name/class/type, [regs] NAME(id:..)=value, [dump*] file/address/...
 *   trace.ini     [trace_buffers] buffers=a,b  [<buf>] name/file/format
 *                 [source_buffers] SOURCE=BUFFER   [core_trace_sources] CORE=SOURCE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ini.h"
#include "tracekit/coresight.h"

static char *join(const char *dir, const char *file)
{
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, file);
    return p;
}

static void copy_str(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

static tk_cs_protocol protocol_of(const char *type)
{
    if (!strncasecmp(type, "ETM4", 4))
        return TK_CS_PROTO_ETM4;
    if (!strncasecmp(type, "ETE", 3))
        return TK_CS_PROTO_ETE;
    if (!strncasecmp(type, "ETM3", 4))
        return TK_CS_PROTO_ETM3;
    if (!strncasecmp(type, "PTM", 3))
        return TK_CS_PROTO_PTM;
    if (!strncasecmp(type, "STM", 3))
        return TK_CS_PROTO_STM;
    if (!strncasecmp(type, "ITM", 3))
        return TK_CS_PROTO_ITM;
    return TK_CS_PROTO_UNKNOWN;
}

const char *tk_cs_protocol_name(tk_cs_protocol proto)
{
    static const char *const names[] = {"unknown", "ETMv4", "ETE", "ETMv3", "PTM", "STM", "ITM"};
    return (unsigned)proto < sizeof(names) / sizeof(names[0]) ? names[proto] : "unknown";
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    if (!s || !*s)
        return -1;
    *v = strtoull(s, &end, 0);
    return *end ? -1 : 0;
}

/* Register key "TRCIDR0(id:0x78)" or "TRCIDR0(0x078)" or "TRCIDR0". */
tk_status tk_cs_etm_regs_set(tk_cs_etm_regs *r, const char *key, uint32_t v)
{
    size_t n = strcspn(key, "(");
    char name[32];
    if (n >= sizeof(name))
        return TK_ERR_INVALID;
    memcpy(name, key, n);
    name[n] = 0;
    if (!strcasecmp(name, "TRCCONFIGR"))
        r->configr = v;
    else if (!strcasecmp(name, "TRCTRACEIDR"))
        r->traceidr = v;
    else if (!strcasecmp(name, "TRCAUTHSTATUS"))
        r->authstatus = v;
    else if (!strcasecmp(name, "TRCDEVARCH"))
        r->devarch = v;
    else if (!strncasecmp(name, "TRCIDR", 6)) {
        char *end;
        unsigned long i = strtoul(name + 6, &end, 10);
        if (*end || end == name + 6 || i >= 14)
            return TK_ERR_INVALID;
        r->idr[i] = v;
    } else {
        return TK_ERR_INVALID;
    }
    return TK_OK;
}

/* The register that holds the trace ID of a source whose registers tk_cs_etm_regs does not
 * keep, and where in it (*shift): ETMv3 and PTM ETMTRACEIDR[6:0], STM STMTCSR.TRACEID[22:16],
 * ITM ITMTCR.TraceBusID[22:16]; NULL for ETMv4/ETE (TRCTRACEIDR[6:0], in regs.traceidr).
 * Sources not decoded still need it: messages name them by ID and --id selects them. */
static const char *trace_id_reg(tk_cs_protocol proto, unsigned *shift)
{
    *shift = proto == TK_CS_PROTO_STM || proto == TK_CS_PROTO_ITM ? 16 : 0;
    return proto == TK_CS_PROTO_ETM3 || proto == TK_CS_PROTO_PTM ? "ETMTRACEIDR"
           : proto == TK_CS_PROTO_STM                            ? "STMTCSR"
           : proto == TK_CS_PROTO_ITM                            ? "ITMTCR"
                                                                 : NULL;
}

/* Register key "NAME(...)" or "NAME" names register name. */
static bool reg_key_is(const char *key, const char *name)
{
    size_t n = strcspn(key, "(");
    return n == strlen(name) && !strncasecmp(key, name, n);
}

static tk_status grow(void **arr, size_t n, size_t elem)
{
    if (n & (n - 1)) /* grow at powers of two */
        return TK_OK;
    void *p = realloc(*arr, (n ? n * 2 : 1) * elem);
    if (!p)
        return TK_ERR_NOMEM;
    *arr = p;
    return TK_OK;
}

/* The .ini file of a snapshot, named relative to the snapshot's directory. */
static tk_status load_ini(const char *dir, const char *file, tk_ini *ini, tk_diag *diag)
{
    char *path = join(dir, file);
    if (!path)
        return TK_ERR_NOMEM;
    tk_status st = tk_ini_load(path, ini, diag);
    free(path);
    return st;
}

static tk_status load_device(tk_cs_snapshot *ss, const char *dir, const char *file, tk_diag *diag)
{
    tk_ini ini;
    tk_status st = load_ini(dir, file, &ini, diag);
    if (st)
        return st;
    const char *name = tk_ini_get(&ini, "device", "name");
    const char *type = tk_ini_get(&ini, "device", "type");
    const char *cls = tk_ini_get(&ini, "device", "class");
    if (!name || !type) {
        tk_ini_free(&ini);
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s/%s: [device] needs name and type", dir, file);
    }
    tk_cs_protocol proto = protocol_of(type);
    bool is_source = cls ? !strcasecmp(cls, "trace_source") : proto != TK_CS_PROTO_UNKNOWN;
    if (is_source) {
        if ((st = grow((void **)&ss->sources, ss->nsources, sizeof(*ss->sources))))
            goto out;
        tk_cs_source *s = &ss->sources[ss->nsources++];
        memset(s, 0, sizeof(*s));
        copy_str(s->name, sizeof(s->name), name);
        copy_str(s->type, sizeof(s->type), type);
        s->protocol = proto;
        s->buffer = s->core = -1;
        unsigned id_shift;
        const char *id_reg = trace_id_reg(proto, &id_shift);
        bool id_found = false;
        uint64_t id_value = 0; /* 0 when the .ini lacks the register */
        for (size_t i = 0; i < ini.n; i++) {
            uint64_t v;
            if (strcmp(ini.e[i].section, "regs"))
                continue;
            if (parse_u64(ini.e[i].value, &v)) {
                st = tk_diag_set(diag, TK_ERR_FORMAT, "%s/%s:%u: bad register value '%s'", dir,
                                 file, ini.e[i].line, ini.e[i].value);
                goto out;
            }
            tk_cs_etm_regs_set(&s->regs, ini.e[i].key, (uint32_t)v); /* others: not needed */
            if (id_reg && !id_found && reg_key_is(ini.e[i].key, id_reg)) {
                id_value = v;
                id_found = true;
            }
        }
        s->trace_id = (uint8_t)((id_reg ? id_value >> id_shift : s->regs.traceidr) & 0x7f);
    } else {
        if ((st = grow((void **)&ss->cores, ss->ncores, sizeof(*ss->cores))))
            goto out;
        tk_cs_core *c = &ss->cores[ss->ncores++];
        memset(c, 0, sizeof(*c));
        copy_str(c->name, sizeof(c->name), name);
        copy_str(c->type, sizeof(c->type), type);
        if ((st = tk_cs_mem_new(&c->mem)))
            goto out;
        /* Memory dumps: every [dump...] section. A dump whose file is missing is skipped (some
         * published snapshots reference libraries they do not ship); its code is then simply
         * not accessible to the decoder. */
        for (size_t i = 0; i < ini.n; i++) {
            const char *sec = ini.e[i].section;
            if (strncmp(sec, "dump", 4) || strcasecmp(ini.e[i].key, "file"))
                continue;
            uint64_t addr = 0, len = 0, off = 0;
            const char *a = tk_ini_get(&ini, sec, "address");
            const char *l = tk_ini_get(&ini, sec, "length");
            const char *o = tk_ini_get(&ini, sec, "offset");
            if (parse_u64(a, &addr) || (l && parse_u64(l, &len)) || (o && parse_u64(o, &off))) {
                st = tk_diag_set(diag, TK_ERR_FORMAT, "%s/%s:%u: bad [%s] address/length", dir,
                                 file, ini.e[i].line, sec);
                goto out;
            }
            char *dpath = join(dir, ini.e[i].value);
            if (!dpath) {
                st = TK_ERR_NOMEM;
                goto out;
            }
            tk_status ds = tk_cs_mem_add_file(c->mem, addr, dpath, off, len, NULL);
            free(dpath);
            if (ds == TK_ERR_NOMEM) {
                st = ds;
                goto out;
            }
        }
    }
out:
    tk_ini_free(&ini);
    return st;
}

static int find_source(const tk_cs_snapshot *ss, const char *name)
{
    for (size_t i = 0; i < ss->nsources; i++)
        if (!strcmp(ss->sources[i].name, name))
            return (int)i;
    return -1;
}

/* Line of the "name=" key that declared a buffer (its section's place in the file). */
static unsigned buffer_line(const tk_ini *ini, const tk_cs_buffer *b)
{
    for (size_t i = 0; i < ini->n; i++)
        if (!strcasecmp(ini->e[i].key, "name") && !strcmp(ini->e[i].value, b->name) &&
            strncmp(ini->e[i].section, "device", 6))
            return ini->e[i].line;
    return UINT32_MAX;
}

static tk_status load_trace(tk_cs_snapshot *ss, const char *dir, const char *file, tk_diag *diag)
{
    tk_ini ini;
    tk_status st = load_ini(dir, file, &ini, diag);
    if (st)
        return st;
    const char *list = tk_ini_get(&ini, "trace_buffers", "buffers");
    char *copy = strdup(list ? list : "");
    if (!copy) {
        st = TK_ERR_NOMEM;
        goto out;
    }
    for (char *save, *tok = strtok_r(copy, ", \t", &save); tok;
         tok = strtok_r(NULL, ", \t", &save)) {
        char sec[64];
        copy_str(sec, sizeof(sec), tok);
        for (char *c = sec; *c; c++)
            *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
        const char *name = tk_ini_get(&ini, sec, "name");
        const char *bfile = tk_ini_get(&ini, sec, "file");
        const char *fmt = tk_ini_get(&ini, sec, "format");
        if (!name || !bfile) {
            st = tk_diag_set(diag, TK_ERR_FORMAT, "%s/%s: buffer [%s] needs name and file", dir,
                             file, sec);
            break;
        }
        if ((st = grow((void **)&ss->buffers, ss->nbuffers, sizeof(*ss->buffers))))
            break;
        tk_cs_buffer *b = &ss->buffers[ss->nbuffers++];
        memset(b, 0, sizeof(*b));
        copy_str(b->name, sizeof(b->name), name);
        b->path = join(dir, bfile);
        if (!b->path) {
            st = TK_ERR_NOMEM;
            break;
        }
        if (!fmt || !strcasecmp(fmt, "coresight"))
            b->format = TK_CS_FMT_FRAMED;
        else if (!strcasecmp(fmt, "dstream_coresight"))
            b->format = TK_CS_FMT_DSTREAM;
        else if (!strcasecmp(fmt, "source_data"))
            b->format = TK_CS_FMT_RAW;
        else {
            st = tk_diag_set(diag, TK_ERR_UNSUPPORTED, "%s/%s: buffer format '%s'", dir, file, fmt);
            break;
        }
    }
    free(copy);
    if (st)
        goto out;
    /* Keep the buffers in the order their sections appear in the file: the first one is the
     * default trace source (as for OpenCSD's trc_pkt_lister). */
    for (size_t i = 1; i < ss->nbuffers; i++)
        for (size_t j = i;
             j > 0 && buffer_line(&ini, &ss->buffers[j]) < buffer_line(&ini, &ss->buffers[j - 1]);
             j--) {
            tk_cs_buffer t = ss->buffers[j];
            ss->buffers[j] = ss->buffers[j - 1];
            ss->buffers[j - 1] = t;
        }
    for (size_t i = 0; i < ini.n; i++) {
        const tk_ini_entry *e = &ini.e[i];
        if (!strcmp(e->section, "source_buffers")) {
            int s = find_source(ss, e->key);
            for (size_t b = 0; s >= 0 && b < ss->nbuffers; b++)
                if (!strcmp(ss->buffers[b].name, e->value))
                    ss->sources[s].buffer = (int)b;
        } else if (!strcmp(e->section, "core_trace_sources")) {
            int s = find_source(ss, e->value);
            for (size_t c = 0; s >= 0 && c < ss->ncores; c++)
                if (!strcmp(ss->cores[c].name, e->key))
                    ss->sources[s].core = (int)c;
        }
    }
out:
    tk_ini_free(&ini);
    return st;
}

tk_status tk_cs_snapshot_load(const char *dir, tk_cs_snapshot **out, tk_diag *diag)
{
    *out = NULL;
    tk_cs_snapshot *ss = calloc(1, sizeof(*ss));
    if (!ss)
        return TK_ERR_NOMEM;
    char *path = join(dir, "snapshot.ini");
    if (!path) {
        free(ss);
        return TK_ERR_NOMEM;
    }
    tk_ini ini;
    tk_status st = tk_ini_load(path, &ini, diag);
    free(path);
    if (st) {
        free(ss);
        return st;
    }
    for (size_t i = 0; i < ini.n && !st; i++)
        if (!strcmp(ini.e[i].section, "device_list"))
            st = load_device(ss, dir, ini.e[i].value, diag);
    const char *meta = tk_ini_get(&ini, "trace", "metadata");
    if (!st && meta)
        st = load_trace(ss, dir, meta, diag);
    tk_ini_free(&ini);
    if (st) {
        tk_cs_snapshot_free(ss);
        return st;
    }
    *out = ss;
    return TK_OK;
}

void tk_cs_snapshot_free(tk_cs_snapshot *ss)
{
    if (!ss)
        return;
    for (size_t i = 0; i < ss->ncores; i++)
        tk_cs_mem_free(ss->cores[i].mem);
    for (size_t i = 0; i < ss->nbuffers; i++)
        free(ss->buffers[i].path);
    free(ss->cores);
    free(ss->sources);
    free(ss->buffers);
    free(ss);
}

const tk_cs_source *tk_cs_snapshot_find_id(const tk_cs_snapshot *ss, uint8_t id)
{
    for (size_t i = 0; i < ss->nsources; i++)
        if (ss->sources[i].trace_id == id)
            return &ss->sources[i];
    return NULL;
}

tk_status tk_cs_snapshot_from_file(const char *path, tk_cs_buffer_format format,
                                   const tk_cs_etm_regs *regs, int id, tk_cs_snapshot **out)
{
    *out = NULL;
    if (!path || !regs || id > 0x6f || format < TK_CS_FMT_FRAMED || format > TK_CS_FMT_TPIU_HSYNC ||
        (format == TK_CS_FMT_RAW && id < 0))
        return TK_ERR_INVALID;
    tk_cs_snapshot *ss = calloc(1, sizeof(*ss));
    if (!ss)
        return TK_ERR_NOMEM;
    size_t n = id >= 0 ? 1 : 0x6f;
    ss->sources = calloc(n, sizeof(*ss->sources));
    ss->cores = calloc(1, sizeof(*ss->cores));
    ss->buffers = calloc(1, sizeof(*ss->buffers));
    if (!ss->sources || !ss->cores || !ss->buffers || !(ss->buffers[0].path = strdup(path)) ||
        tk_cs_mem_new(&ss->cores[0].mem)) {
        tk_cs_snapshot_free(ss);
        return TK_ERR_NOMEM;
    }
    ss->nbuffers = ss->ncores = 1;
    ss->nsources = n;
    copy_str(ss->buffers[0].name, sizeof(ss->buffers[0].name), "trace");
    ss->buffers[0].format = format;
    copy_str(ss->cores[0].name, sizeof(ss->cores[0].name), "core");
    for (size_t i = 0; i < n; i++) {
        tk_cs_source *s = &ss->sources[i];
        snprintf(s->name, sizeof(s->name), "ETM_%zu", i);
        copy_str(s->type, sizeof(s->type), "ETM4");
        s->protocol = TK_CS_PROTO_ETM4;
        s->regs = *regs;
        s->trace_id = (uint8_t)(id >= 0 ? id : (int)i + 1);
        s->regs.traceidr = s->trace_id;
        s->buffer = 0;
        s->core = 0;
    }
    *out = ss;
    return TK_OK;
}

int tk_cs_snapshot_default_buffer(const tk_cs_snapshot *ss)
{
    for (size_t b = 0; b < ss->nbuffers; b++)
        for (size_t i = 0; i < ss->nsources; i++)
            if (ss->sources[i].buffer == (int)b && tk_cs_protocol_is_etm4(ss->sources[i].protocol))
                return (int)b;
    return -1;
}

const tk_cs_mem *tk_cs_snapshot_source_mem(const tk_cs_snapshot *ss, const tk_cs_source *src)
{
    if (src->core >= 0 && (size_t)src->core < ss->ncores)
        return ss->cores[src->core].mem;
    for (size_t i = 0; i < ss->ncores; i++)
        if (tk_cs_mem_nregions(ss->cores[i].mem))
            return ss->cores[i].mem;
    return ss->ncores ? ss->cores[0].mem : NULL;
}

tk_status tk_cs_buffer_read(const tk_cs_buffer *b, uint8_t **out, size_t *len, tk_diag *diag)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(b->path, "rb");
    if (!f)
        return tk_diag_set(diag, TK_ERR_IO, "cannot open trace buffer %s", b->path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
    if (!buf) {
        fclose(f);
        return TK_ERR_NOMEM;
    }
    if (size > 0 && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(buf);
        return tk_diag_set(diag, TK_ERR_IO, "cannot read %s", b->path);
    }
    fclose(f);
    *out = buf;
    *len = size > 0 ? (size_t)size : 0;
    return TK_OK;
}
