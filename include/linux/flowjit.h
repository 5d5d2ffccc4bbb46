/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flowjit: runtime code images for branch trace decoders.
 *
 * The hooks other subsystems call are one-line static inlines: a static
 * branch that is enabled only while a perf event with attr.flowjit
 * exists, and a call into kernel/flowjit/ behind it. Without
 * CONFIG_FLOWJIT they compile away, and attr.flowjit is rejected.
 */
#ifndef _LINUX_FLOWJIT_H
#define _LINUX_FLOWJIT_H

#include <linux/errno.h>
#include <linux/jump_label_ratelimit.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/perf_event.h>
#include <uapi/linux/flowjit.h>

struct bpf_prog;
struct mm_struct;
struct task_struct;
struct vm_area_struct;
struct vm_fault;

bool flowjit_file_trackable(struct file *file);

#ifdef CONFIG_FLOWJIT
/*
 * The protection of @vma, executable, makes its PTEs non-executable:
 * flowjit armed it (nothing else gives an executable VMA such a
 * vm_page_prot).
 */
static inline bool flowjit_vma_armed(struct vm_area_struct *vma)
{
	return !pte_exec(pfn_pte(0, vma->vm_page_prot));
}
#else
static inline bool flowjit_vma_armed(struct vm_area_struct *vma)
{
	return false;
}
#endif

/*
 * What flowjit tracks in user space: executable anonymous memory, and
 * executable mappings of shmem files without a name (memfd, shared
 * anonymous memory, SysV shm): code that no file holds. The link count
 * decides when a mapping is armed or faults; a mapping flowjit armed
 * stays tracked if its file gets a name later (linkat() of an
 * O_TMPFILE), until its protection is computed again without tracking.
 */
static inline bool flowjit_vma_trackable(struct vm_area_struct *vma)
{
	if (!(vma->vm_flags & VM_EXEC))
		return false;
	if (vma_is_anonymous(vma))
		return true;
	return IS_ENABLED(CONFIG_FLOWJIT) && vma->vm_file &&
	       (flowjit_file_trackable(vma->vm_file) || flowjit_vma_armed(vma));
}

#ifdef CONFIG_FLOWJIT

extern struct static_key_false_deferred flowjit_active;

int flowjit_perf_event_open(const struct perf_event_attr *attr);
void flowjit_account_event(struct perf_event *event);
void flowjit_unaccount_event(struct perf_event *event);
void __flowjit_bpf_event(struct bpf_prog *prog, enum perf_bpf_event_type type);

int flowjit_perf_event_attach(struct perf_event *event, struct task_struct *task);
void flowjit_perf_event_detach(struct perf_event *event);
void flowjit_perf_event_account(struct perf_event *event);
void flowjit_exec(void);
void flowjit_mm_init(struct mm_struct *mm);
void flowjit_mm_fork(struct mm_struct *oldmm, struct mm_struct *mm,
		     struct task_struct *tsk);
void flowjit_mm_exit(struct mm_struct *mm);
void flowjit_task_exit(struct task_struct *tsk);
bool flowjit_mm_tracked(struct mm_struct *mm);
bool flowjit_vma_shmem(struct vm_area_struct *vma);
pgprot_t __flowjit_vm_page_prot(struct vm_area_struct *vma, pgprot_t prot);
vm_fault_t flowjit_handle_exec_fault(struct vm_fault *vmf);
bool __flowjit_rearm_pte(struct vm_area_struct *vma, unsigned long addr,
			 pte_t *ptep, pte_t entry);
void __flowjit_retire_range(struct vm_area_struct *vma, unsigned long start,
			    unsigned long end);
void __flowjit_moved_range(struct vm_area_struct *vma, unsigned long new,
			   unsigned long len);
void __flowjit_rearm_aliases(struct vm_area_struct *except,
			     struct page *page);
void __flowjit_split_huge_exec(struct vm_fault *vmf);

/* address spaces tracked now */
extern atomic_t flowjit_tracked_mms;

/* the protection new PTEs of @vma get: not executable while tracked */
static inline pgprot_t flowjit_vm_page_prot(struct vm_area_struct *vma,
					    pgprot_t prot)
{
	if (unlikely(vma->vm_mm->flowjit))
		return __flowjit_vm_page_prot(vma, prot);
	return prot;
}

/*
 * An instruction fetch from a VMA flowjit tracks that faulted on a
 * present PTE: flowjit made the page non-executable (x86 reports such
 * a fault as a protection fault; let it through to handle_mm_fault()).
 */
static inline bool flowjit_exec_fault_allowed(struct vm_area_struct *vma)
{
	return flowjit_vma_trackable(vma);
}

/* the same fault in handle_pte_fault(): flowjit handles it */
static inline bool flowjit_exec_fault(struct vm_fault *vmf)
{
	return (vmf->flags & FAULT_FLAG_INSTRUCTION) &&
	       !pte_exec(vmf->orig_pte) && flowjit_vma_trackable(vmf->vma);
}

/*
 * The same fault on a huge PMD: flowjit splits the mapping into PTEs,
 * which keep its protection, and the fetch faults again on a PTE. A
 * user instruction fetch that access_error() let through faults on a
 * present PMD only if the PMD is not executable (protection keys were
 * refused there, NUMA hinting is handled before): the rare fetch that
 * raced with another thread's fault splits a PMD that needed none.
 */
static inline bool flowjit_huge_exec_fault(struct vm_fault *vmf)
{
	if (!IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) ||
	    !(vmf->flags & FAULT_FLAG_INSTRUCTION) ||
	    !flowjit_vma_trackable(vmf->vma))
		return false;
	__flowjit_split_huge_exec(vmf);
	return true;
}

/*
 * A shared mapping of a shmem file flowjit took code from
 * (AS_FLOWJIT_CODE, set under the page lock before the first snapshot
 * of a page of the file), while any address space is tracked: a write
 * through it must fault, so that the executable aliases of the page are
 * re-armed first (flowjit_rearm_aliases()). vma_wants_writenotify()
 * makes vm_page_prot read-only wherever it is computed from then on; a
 * mapping whose vm_page_prot is older maps its pages read-only on read
 * faults (do_set_pte()), and no PMD maps the file writable
 * (flowjit_refuse_file_pmd()).
 */
static inline bool flowjit_shared_code(struct vm_area_struct *vma)
{
	return unlikely(atomic_read(&flowjit_tracked_mms)) &&
	       (vma->vm_flags & VM_SHARED) && flowjit_vma_shmem(vma) &&
	       test_bit(AS_FLOWJIT_CODE, &vma->vm_file->f_mapping->flags);
}

/*
 * A file THP in an executable VMA whose protection flowjit made
 * non-executable is mapped with PTEs: an instruction fetch from a PMD
 * would have to split it (flowjit_huge_exec_fault()), which for a file
 * PMD only zaps it, and the refault would map it huge and
 * non-executable again. The protection stays after tracking ends.
 * Writable mappings of a file flowjit took code from get PTEs too: a
 * write re-arms the aliases of one 4 KiB page.
 */
static inline bool flowjit_refuse_file_pmd(struct vm_area_struct *vma)
{
	if ((vma->vm_flags & VM_EXEC) && flowjit_vma_armed(vma))
		return true;
	return (vma->vm_flags & VM_WRITE) && flowjit_shared_code(vma);
}

/* a write fault makes a page writable: make it non-executable first */
static inline bool flowjit_rearm_pte(struct vm_area_struct *vma,
				     unsigned long addr, pte_t *ptep,
				     pte_t entry)
{
	return vma->vm_mm->flowjit && flowjit_vma_trackable(vma) &&
	       __flowjit_rearm_pte(vma, addr, ptep, entry);
}

/*
 * GUP writes a page that is read-only in its PTE without a fault when
 * FOLL_FORCE meets an exclusive anonymous page (/proc/PID/mem, ptrace
 * pokes): code flowjit made executable must take the write fault that
 * re-arms it (flowjit_rearm_pte()) first.
 */
static inline bool flowjit_gup_must_fault(struct vm_area_struct *vma,
					  pte_t pte)
{
	return unlikely(vma->vm_mm->flowjit) && pte_exec(pte) &&
	       flowjit_vma_trackable(vma);
}

/* [start, end) of @vma is unmapped or discarded */
static inline void flowjit_retire_range(struct vm_area_struct *vma,
					unsigned long start, unsigned long end)
{
	if (unlikely(vma->vm_mm->flowjit))
		__flowjit_retire_range(vma, start, end);
}

/* mremap() moved pages of @vma to [new, new + len) */
static inline void flowjit_moved_range(struct vm_area_struct *vma,
				       unsigned long new, unsigned long len)
{
	if (unlikely(vma->vm_mm->flowjit))
		__flowjit_moved_range(vma, new, len);
}

/*
 * A write fault is about to make a page of a shared mapping writable,
 * which another, executable mapping of the same page may run: take the
 * page lock and re-arm such aliases (flowjit_rearm_aliases()) first.
 */
static inline bool flowjit_shared_write(struct vm_fault *vmf)
{
	return flowjit_shared_code(vmf->vma);
}

/* @page, locked, becomes writable through @vma: re-arm other mappings */
static inline void flowjit_rearm_aliases(struct vm_area_struct *vma,
					 struct page *page)
{
	if (unlikely(atomic_read(&flowjit_tracked_mms)))
		__flowjit_rearm_aliases(vma, page);
}

/* a BPF program was loaded (its image is final) or is being freed */
static inline void flowjit_bpf_event(struct bpf_prog *prog,
				     enum perf_bpf_event_type type)
{
	if (static_branch_unlikely(&flowjit_active.key))
		__flowjit_bpf_event(prog, type);
}

void __flowjit_text_write(const void *addr, size_t len);
void __flowjit_bpf_trampoline(const void *image, unsigned int len, u8 op);

/* the BPF dispatcher wrote its image [addr, addr + len) */
static inline void flowjit_text_write(const void *addr, size_t len)
{
	if (static_branch_unlikely(&flowjit_active.key))
		__flowjit_text_write(addr, len);
}

/* a BPF trampoline image is executable (@len bytes), or is being freed */
static inline void flowjit_bpf_trampoline(const void *image, int len, u8 op)
{
	if (static_branch_unlikely(&flowjit_active.key))
		__flowjit_bpf_trampoline(image, len, op);
}

#else /* !CONFIG_FLOWJIT */

static inline int flowjit_perf_event_open(const struct perf_event_attr *attr)
{
	return attr->flowjit ? -EINVAL : 0;
}

static inline int flowjit_perf_event_attach(struct perf_event *event,
					    struct task_struct *task)
{
	return 0;
}

static inline void flowjit_perf_event_detach(struct perf_event *event) { }
static inline void flowjit_exec(void) { }
static inline void flowjit_mm_init(struct mm_struct *mm) { }
static inline void flowjit_mm_fork(struct mm_struct *oldmm,
				   struct mm_struct *mm,
				   struct task_struct *tsk) { }
static inline void flowjit_mm_exit(struct mm_struct *mm) { }
static inline void flowjit_task_exit(struct task_struct *tsk) { }

static inline pgprot_t flowjit_vm_page_prot(struct vm_area_struct *vma,
					    pgprot_t prot)
{
	return prot;
}

static inline bool flowjit_exec_fault_allowed(struct vm_area_struct *vma)
{
	return false;
}

static inline bool flowjit_exec_fault(struct vm_fault *vmf)
{
	return false;
}

static inline vm_fault_t flowjit_handle_exec_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGSEGV;
}

static inline bool flowjit_rearm_pte(struct vm_area_struct *vma,
				     unsigned long addr, pte_t *ptep,
				     pte_t entry)
{
	return false;
}

static inline bool flowjit_huge_exec_fault(struct vm_fault *vmf)
{
	return false;
}

static inline bool flowjit_gup_must_fault(struct vm_area_struct *vma,
					  pte_t pte)
{
	return false;
}

static inline bool flowjit_refuse_file_pmd(struct vm_area_struct *vma)
{
	return false;
}

static inline bool flowjit_shared_code(struct vm_area_struct *vma)
{
	return false;
}

static inline void flowjit_retire_range(struct vm_area_struct *vma,
					unsigned long start,
					unsigned long end) { }
static inline void flowjit_moved_range(struct vm_area_struct *vma,
				       unsigned long new, unsigned long len) { }
static inline bool flowjit_shared_write(struct vm_fault *vmf)
{
	return false;
}

static inline void flowjit_rearm_aliases(struct vm_area_struct *vma,
					 struct page *page) { }
static inline void flowjit_account_event(struct perf_event *event) { }
static inline void flowjit_unaccount_event(struct perf_event *event) { }
static inline void flowjit_bpf_event(struct bpf_prog *prog,
				     enum perf_bpf_event_type type) { }
static inline void flowjit_text_write(const void *addr, size_t len) { }
static inline void flowjit_bpf_trampoline(const void *image, int len,
					  u8 op) { }

#endif /* CONFIG_FLOWJIT */

#endif /* _LINUX_FLOWJIT_H */
