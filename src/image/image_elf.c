/* SPDX-License-Identifier: BSD-2-Clause */
/* Opening an ELF executable with libelf: the file is mapped once and segments point into
 * the mapping, so loading costs no copies. */
#include "image_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *machine_name(unsigned m)
{
    switch (m) {
    case EM_NONE:
        return "none";
    case EM_386:
        return "x86 (i386)";
    case EM_X86_64:
        return "x86-64";
    case EM_ARM:
        return "ARM";
    case EM_AARCH64:
        return "AArch64";
    case EM_RISCV:
        return "RISC-V";
    case EM_PPC:
        return "PowerPC";
    case EM_PPC64:
        return "PowerPC64";
    case EM_MIPS:
        return "MIPS";
    case EM_S390:
        return "S/390";
    case EM_SPARCV9:
        return "SPARC V9";
    }
    return NULL;
}

static tk_status map_file(const char *path, tk_image *img, tk_diag *diag)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    void *m;

    if (fd < 0)
        return tk_diag_set(diag, TK_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return tk_diag_set(diag, TK_ERR_IO, "%s: not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: not an ELF file (empty)", path);
    }
    m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return tk_diag_set(diag, TK_ERR_IO, "%s: cannot map: %s", path, strerror(errno));
    img->map = m;
    img->map_len = (size_t)st.st_size;
    return TK_OK;
}

static tk_status load_segments(tk_image *img, tk_diag *diag)
{
    size_t nph;

    if (elf_getphdrnum(img->elf, &nph) != 0)
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: bad program headers: %s", img->path,
                           elf_errmsg(-1));
    img->segs = calloc(nph ? nph : 1, sizeof(*img->segs));
    if (!img->segs)
        return TK_ERR_NOMEM;
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        tk_segment *s;

        if (!gelf_getphdr(img->elf, (int)i, &ph))
            return tk_diag_set(diag, TK_ERR_FORMAT, "%s: program header %zu unreadable: %s",
                               img->path, i, elf_errmsg(-1));
        if (ph.p_type != PT_LOAD)
            continue;
        if (ph.p_offset > img->map_len || ph.p_filesz > img->map_len - ph.p_offset)
            return tk_diag_set(diag, TK_ERR_FORMAT,
                               "%s: segment %zu (offset 0x%llx, %llu bytes) runs past the end of "
                               "the %zu-byte file: truncated ELF?",
                               img->path, i, (unsigned long long)ph.p_offset,
                               (unsigned long long)ph.p_filesz, img->map_len);
        if (ph.p_filesz > ph.p_memsz || ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
            return tk_diag_set(diag, TK_ERR_FORMAT, "%s: segment %zu has inconsistent sizes",
                               img->path, i);
        s = &img->segs[img->nseg++];
        s->vaddr = ph.p_vaddr;
        s->filesz = ph.p_filesz;
        s->memsz = ph.p_memsz;
        s->data = (const uint8_t *)img->map + ph.p_offset;
        s->exec = (ph.p_flags & PF_X) != 0;
        s->write = (ph.p_flags & PF_W) != 0;
    }
    if (img->nseg == 0)
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: no loadable segment", img->path);
    return TK_OK;
}

static tk_status open_elf(const char *path, bool any_arch, tk_image **out, tk_diag *diag)
{
    tk_image *img;
    GElf_Ehdr eh;
    tk_status st;
    const char *mname;
    int cls;

    if (!path || !out)
        return TK_ERR_INVALID;
    *out = NULL;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return tk_diag_set(diag, TK_ERR_UNSUPPORTED, "libelf is too old");
    img = calloc(1, sizeof(*img));
    if (!img)
        return TK_ERR_NOMEM;
    atomic_init(&img->last_seg, 0);
    img->path = strdup(path);
    if (!img->path) {
        free(img);
        return TK_ERR_NOMEM;
    }
    st = map_file(path, img, diag);
    if (st != TK_OK)
        goto fail;
    img->elf = elf_memory(img->map, img->map_len);
    if (!img->elf || elf_kind(img->elf) != ELF_K_ELF) {
        st = tk_diag_set(diag, TK_ERR_FORMAT, "%s: not an ELF file", path);
        goto fail;
    }
    cls = gelf_getclass(img->elf);
    if (!gelf_getehdr(img->elf, &eh) || (cls != ELFCLASS32 && cls != ELFCLASS64)) {
        st = tk_diag_set(diag, TK_ERR_FORMAT, "%s: ELF header unreadable (truncated?): %s", path,
                         elf_errmsg(-1));
        goto fail;
    }
    img->xlen = cls == ELFCLASS64 ? 64 : 32;
    img->entry = eh.e_entry;
    mname = machine_name(eh.e_machine);
    switch (eh.e_machine) {
    case EM_RISCV:
        img->arch = TK_ARCH_RISCV;
        break;
    case EM_ARM:
        img->arch = TK_ARCH_ARM;
        break;
    case EM_AARCH64:
        img->arch = TK_ARCH_AARCH64;
        break;
    default:
        if (mname)
            st = tk_diag_set(diag, any_arch ? TK_ERR_UNSUPPORTED : TK_ERR_NOT_RISCV,
                             "%s: ELF for %s (e_machine %u), not %s", path, mname, eh.e_machine,
                             any_arch ? "RISC-V, ARM or AArch64" : "RISC-V");
        else
            st = tk_diag_set(diag, any_arch ? TK_ERR_UNSUPPORTED : TK_ERR_NOT_RISCV,
                             "%s: ELF for machine %u, not %s", path, eh.e_machine,
                             any_arch ? "RISC-V, ARM or AArch64" : "RISC-V");
        goto fail;
    }
    if (!any_arch && img->arch != TK_ARCH_RISCV) {
        st = tk_diag_set(diag, TK_ERR_NOT_RISCV, "%s: ELF for %s (e_machine %u), not RISC-V", path,
                         mname, eh.e_machine);
        goto fail;
    }
    st = load_segments(img, diag);
    if (st != TK_OK)
        goto fail;
    st = tk_image_load_symbols(img, diag);
    if (st != TK_OK)
        goto fail;
    *out = img;
    return TK_OK;
fail:
    if (st == TK_ERR_NOMEM)
        tk_diag_set(diag, st, "%s: out of memory", path);
    tk_image_free(img);
    return st;
}

tk_status tk_image_open_elf(const char *path, tk_image **out, tk_diag *diag)
{
    return open_elf(path, false, out, diag);
}

tk_status tk_image_open_elf_any(const char *path, tk_image **out, tk_diag *diag)
{
    return open_elf(path, true, out, diag);
}
