/* SPDX-License-Identifier: BSD-2-Clause */
/* Symbols of an ELF image: an address-sorted list for symbolisation (binary search) and a
 * name-sorted list for lookup. Names are copied into one pool owned by the image. */
#include "image_internal.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* Symbols that name nothing a listing wants: assembler locals and ARM/RISC-V mapping
 * symbols ($x, $d, $a, $t, and $x<isa-string>). */
static bool skip_name(const char *n)
{
    return !n || !n[0] || n[0] == '$' || (n[0] == '.' && n[1] == 'L');
}

static int cmp_addr(const void *a, const void *b)
{
    const tk_symbol *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* At one address: data before code, labels (size 0) before sized symbols, so the last
     * entry at an address is the most specific function. */
    if (x->is_func != y->is_func)
        return x->is_func ? 1 : -1;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_name(const void *a, const void *b)
{
    const tk_symbol *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static Elf_Scn *find_symtab(Elf *elf, GElf_Shdr *sh)
{
    Elf_Scn *scn = NULL, *dyn = NULL;
    GElf_Shdr dsh;

    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr h;
        if (!gelf_getshdr(scn, &h))
            continue;
        if (h.sh_type == SHT_SYMTAB) {
            *sh = h;
            return scn;
        }
        if (h.sh_type == SHT_DYNSYM && !dyn) {
            dyn = scn;
            dsh = h;
        }
    }
    if (dyn)
        *sh = dsh;
    return dyn;
}

tk_status tk_image_load_symbols(tk_image *img, tk_diag *diag)
{
    GElf_Shdr sh;
    Elf_Scn *scn = find_symtab(img->elf, &sh);
    Elf_Data *data;
    size_t n, shnum = 0, pool_len = 0, nkeep = 0, naddr = 0, pos = 0;
    uint8_t *exec_sec = NULL;
    char *pool;
    tk_status st = TK_OK;

    if (!scn)
        return TK_OK; /* stripped: no symbols is not an error */
    if (sh.sh_entsize == 0 || sh.sh_offset > img->map_len ||
        sh.sh_size > img->map_len - sh.sh_offset)
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: symbol table runs past the end of the file",
                           img->path);
    data = elf_getdata(scn, NULL);
    if (!data)
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: symbol table unreadable: %s", img->path,
                           elf_errmsg(-1));
    n = sh.sh_size / sh.sh_entsize;
    if (elf_getshdrnum(img->elf, &shnum) != 0)
        shnum = 0;
    /* Which sections hold code (labels there are code symbols). */
    exec_sec = calloc(shnum ? shnum : 1, 1);
    if (!exec_sec)
        return TK_ERR_NOMEM;
    for (size_t i = 1; i < shnum; i++) {
        GElf_Shdr h;
        Elf_Scn *s = elf_getscn(img->elf, i);
        if (s && gelf_getshdr(s, &h))
            exec_sec[i] = (h.sh_flags & SHF_EXECINSTR) != 0;
    }

    /* Pass 1: count and size the pool. */
    for (size_t i = 1; i < n; i++) {
        GElf_Sym sym;
        const char *name;
        if (!gelf_getsym(data, (int)i, &sym))
            continue;
        if (sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) == STT_SECTION ||
            GELF_ST_TYPE(sym.st_info) == STT_FILE)
            continue;
        name = elf_strptr(img->elf, sh.sh_link, sym.st_name);
        if (skip_name(name))
            continue;
        pool_len += strlen(name) + 1;
        nkeep++;
    }
    pool = malloc(pool_len ? pool_len : 1);
    img->byname = calloc(nkeep ? nkeep : 1, sizeof(*img->byname));
    img->syms = calloc(nkeep ? nkeep : 1, sizeof(*img->syms));
    img->strpool = pool;
    if (!pool || !img->byname || !img->syms) {
        st = TK_ERR_NOMEM;
        goto out;
    }

    /* Pass 2: fill. */
    for (size_t i = 1; i < n && img->nbyname < nkeep; i++) {
        GElf_Sym sym;
        const char *name;
        unsigned type;
        bool in_exec, is_func;
        tk_symbol s;
        size_t len;

        if (!gelf_getsym(data, (int)i, &sym))
            continue;
        type = GELF_ST_TYPE(sym.st_info);
        if (sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE)
            continue;
        name = elf_strptr(img->elf, sh.sh_link, sym.st_name);
        if (skip_name(name))
            continue;
        len = strlen(name) + 1;
        memcpy(pool + pos, name, len);
        s.name = pool + pos;
        pos += len;
        s.addr = sym.st_value;
        s.size = sym.st_size;
        in_exec = sym.st_shndx < shnum && exec_sec[sym.st_shndx];
        is_func = type == STT_FUNC || (type == STT_NOTYPE && in_exec);
        /* Thumb functions have bit 0 set in their address (ARM ELF ABI). */
        if (img->arch == TK_ARCH_ARM && type == STT_FUNC)
            s.addr &= ~(uint64_t)1;
        s.is_func = is_func;
        img->byname[img->nbyname++] = s;
        if (is_func || (type == STT_OBJECT && s.size > 0))
            img->syms[naddr++] = s;
    }
    img->nsym = naddr;
    qsort(img->byname, img->nbyname, sizeof(*img->byname), cmp_name);
    qsort(img->syms, img->nsym, sizeof(*img->syms), cmp_addr);
    for (size_t i = 0; i < img->nsym; i++)
        img->nfunc += img->syms[i].is_func;
    img->funcs = calloc(img->nfunc ? img->nfunc : 1, sizeof(*img->funcs));
    if (!img->funcs) {
        st = TK_ERR_NOMEM;
        goto out;
    }
    for (size_t i = 0, k = 0; i < img->nsym; i++)
        if (img->syms[i].is_func)
            img->funcs[k++] = (uint32_t)i;
    tk_image_fix_symbol_extents(img);
out:
    free(exec_sec);
    return st;
}

void tk_image_free_symbols(tk_image *img)
{
    free(img->syms);
    free(img->funcs);
    free(img->byname);
    free(img->strpool);
    img->syms = img->byname = NULL;
    img->funcs = NULL;
    img->strpool = NULL;
    img->nsym = img->nfunc = img->nbyname = 0;
}

size_t tk_image_symbol_count(const tk_image *img)
{
    return img->nsym;
}

const tk_symbol *tk_image_symbol(const tk_image *img, size_t i)
{
    return i < img->nsym ? &img->syms[i] : NULL;
}

/* The code symbol covering addr: the last function starting at or before addr, if addr is
 * inside its size; a label without size (assembly) covers up to the next code symbol. */
const tk_symbol *tk_image_symbolize(const tk_image *img, uint64_t addr, uint64_t *offset)
{
    size_t lo = 0, hi = img->nfunc;
    const tk_symbol *s;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (img->syms[img->funcs[mid]].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    s = &img->syms[img->funcs[lo - 1]];
    if (s->size && addr - s->addr >= s->size)
        return NULL;
    if (offset)
        *offset = addr - s->addr;
    return s;
}

tk_status tk_image_lookup(const tk_image *img, const char *name, uint64_t *addr, uint64_t *size)
{
    size_t lo = 0, hi = img->nbyname;

    if (!name)
        return TK_ERR_INVALID;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(img->byname[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == img->nbyname || strcmp(img->byname[lo].name, name))
        return TK_END;
    if (addr)
        *addr = img->byname[lo].addr;
    if (size)
        *size = img->byname[lo].size;
    return TK_OK;
}
