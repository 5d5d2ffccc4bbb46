/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What kernel/flowjit needs that differs between the kernels the series
 * is kept for: this is Linux 6.12's. Faults may run under a per-VMA lock
 * (lock_vma_under_rcu()) instead of mmap_lock; module memory is
 * mod->mem[]; perf_allow_cpu() takes no attr.
 */
#ifndef _KERNEL_FLOWJIT_BASE_H
#define _KERNEL_FLOWJIT_BASE_H

#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/sysctl.h>

/*
 * Before changing a VMA's vm_page_prot or its PTEs' protection under
 * mmap_lock held for write: keep out faults that hold only the VMA's own
 * lock, as mprotect() does.
 */
static inline void flowjit_vma_start_write(struct vm_area_struct *vma)
{
	vma_start_write(vma);
}

/* re-apply @vma's vm_page_prot to [start, end), as mprotect() would */
static inline void flowjit_reapply_prot(struct mmu_gather *tlb,
					struct vm_area_struct *vma,
					unsigned long start, unsigned long end)
{
	vma_reapply_protection(tlb, vma, start, end);
}

static inline void
flowjit_notifier_range_init(struct mmu_notifier_range *range,
			    struct vm_area_struct *vma, unsigned long start,
			    unsigned long end)
{
	mmu_notifier_range_init(range, MMU_NOTIFY_PROTECTION_PAGE, 0,
				vma->vm_mm, start, end);
}

static inline int flowjit_perf_allow_cpu(struct perf_event *event)
{
	return perf_allow_cpu();
}

/* @header of a record of @size bytes to @event, its sample id in @sample */
static inline void flowjit_header_init(struct perf_event_header *header,
				       struct perf_sample_data *sample,
				       struct perf_event *event, u32 type,
				       u16 misc, u16 size)
{
	perf_event_header__init(header, sample, type, misc, size, event);
}

/*
 * Map and lock vmf->pte again after what may sleep: false if its page
 * table went meanwhile (the fault holds no mmap_lock, only the VMA's).
 */
static inline bool flowjit_fault_relock(struct vm_fault *vmf)
{
	vmf->pte = pte_offset_map_lock(vmf->vma->vm_mm, vmf->pmd,
				       vmf->address, &vmf->ptl);
	return vmf->pte;
}

/*
 * Lock vmf->pte where handle_pte_fault() mapped it, as it would next:
 * pte_offset_map_nolock() gave vmf->ptl, and the mapping holds
 * rcu_read_lock(), so the page table is not freed meanwhile; a PTE that
 * changed is found by the pte_same() after it.
 */
static inline void flowjit_fault_lock(struct vm_fault *vmf)
{
	spin_lock(vmf->ptl);
}

/*
 * kernel.* sysctls: the @n entries of @table before its empty last one
 * (which 6.1 needs); 6.12 refuses an entry without a name.
 */
static inline void flowjit_register_sysctls(struct ctl_table *table,
					    size_t n)
{
	register_sysctl_sz("kernel", table, n);
}

#ifdef CONFIG_MODULES
/* the core (@init false) or init text of @mod: its start and size */
static inline void *flowjit_module_text(struct module *mod, bool init,
					unsigned int *size)
{
	struct module_memory *mem = &mod->mem[init ? MOD_INIT_TEXT : MOD_TEXT];

	*size = mem->size;
	return mem->base;
}
#endif

#endif /* _KERNEL_FLOWJIT_BASE_H */
