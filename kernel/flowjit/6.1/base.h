/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What kernel/flowjit needs that differs between the kernels the series
 * is kept for: this is Linux 6.1's. Faults hold mmap_lock; module text
 * is in mod->core_layout and init_layout.
 */
#ifndef _KERNEL_FLOWJIT_BASE_H
#define _KERNEL_FLOWJIT_BASE_H

#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/sysctl.h>

/* faults hold mmap_lock: the holder of it for write is alone */
static inline void flowjit_vma_start_write(struct vm_area_struct *vma)
{
}

/*
 * Re-apply @vma's vm_page_prot to [start, end), as mprotect_fixup()
 * does: dirty PTEs may keep or regain write access only where the VMA
 * allows writing (a private writable VMA, or a shared one that wants
 * write notification). A PTE of a PROT_READ|PROT_EXEC VMA is dirty from
 * the writes made before the mprotect(): it must stay read-only.
 */
static inline void flowjit_reapply_prot(struct mmu_gather *tlb,
					struct vm_area_struct *vma,
					unsigned long start, unsigned long end)
{
	bool try_writable;

	if (vma->vm_flags & VM_SHARED)
		try_writable = vma_wants_writenotify(vma, vma->vm_page_prot);
	else
		try_writable = vma->vm_flags & VM_WRITE;
	change_protection(tlb, vma, start, end, vma->vm_page_prot,
			  try_writable ? MM_CP_TRY_CHANGE_WRITABLE : 0);
}

static inline void
flowjit_notifier_range_init(struct mmu_notifier_range *range,
			    struct vm_area_struct *vma, unsigned long start,
			    unsigned long end)
{
	mmu_notifier_range_init(range, MMU_NOTIFY_PROTECTION_PAGE, 0, vma,
				vma->vm_mm, start, end);
}

static inline int flowjit_perf_allow_cpu(struct perf_event *event)
{
	return perf_allow_cpu(&event->attr);
}

/* @header of a record of @size bytes to @event, its sample id in @sample */
static inline void flowjit_header_init(struct perf_event_header *header,
				       struct perf_sample_data *sample,
				       struct perf_event *event, u32 type,
				       u16 misc, u16 size)
{
	header->type = type;
	header->misc = misc;
	header->size = size;
	perf_event_header__init_id(header, sample, event);
}

/*
 * Map and lock vmf->pte again after what may sleep: false if its page
 * table went meanwhile, which it cannot on 6.1 (the fault holds
 * mmap_lock, which a collapse into a huge page takes for write).
 */
static inline bool flowjit_fault_relock(struct vm_fault *vmf)
{
	vmf->pte = pte_offset_map_lock(vmf->vma->vm_mm, vmf->pmd,
				       vmf->address, &vmf->ptl);
	return true;
}

/*
 * Lock vmf->pte where handle_pte_fault() mapped it, as it would next
 * (6.1 sets vmf->ptl only then).
 */
static inline void flowjit_fault_lock(struct vm_fault *vmf)
{
	vmf->ptl = pte_lockptr(vmf->vma->vm_mm, vmf->pmd);
	spin_lock(vmf->ptl);
}

/* kernel.* sysctls: @table ends in an empty entry after its @n */
static inline void flowjit_register_sysctls(struct ctl_table *table,
					    size_t n)
{
	register_sysctl_init("kernel", table);
}

#ifdef CONFIG_MODULES
/* the core (@init false) or init text of @mod: its start and size */
static inline void *flowjit_module_text(struct module *mod, bool init,
					unsigned int *size)
{
	struct module_layout *layout = init ? &mod->init_layout :
					      &mod->core_layout;

	*size = layout->text_size;
	return layout->base;
}
#endif

#endif /* _KERNEL_FLOWJIT_BASE_H */
