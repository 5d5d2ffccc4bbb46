// SPDX-License-Identifier: GPL-2.0-only
/*
 * flowjit: user-space JIT code, captured without the JIT's help.
 *
 * In an address space that a flowjit event tracks, every present page of
 * an executable anonymous VMA (or of a shmem file without a name: memfd)
 * is kept W^X in the page tables, whatever the VMA allows; vm_flags,
 * /proc/PID/maps and mprotect() results do not change:
 *
 *	          write fault: re-arm
 *	   +----------------------------------+
 *	   v                                  |
 *	 ARMED (NX, maybe W) ---------> EXECUTABLE (X, read-only)
 *	         exec fault: write-protect, flush TLB,
 *	         snapshot the page, make it executable
 *
 * Tracked VMAs carry NX in vm_page_prot, so every PTE built from it
 * (anonymous fault, COW, swap-in, migration) starts armed. A snapshot is
 * taken with the page read-only in every TLB, so no other thread can
 * change the bytes while they are copied; a writer that races it faults
 * and re-arms the page after the copy, and its bytes get the next
 * revision. The re-arming write fault flushes the TLB too, so that no
 * CPU keeps executing the page through a stale executable entry.
 *
 * A page of a shared file may be written through another mapping (a
 * memfd mapped RW at one address and RX at another): the exec fault
 * write-protects every shared mapping of the page (folio_mkclean())
 * under the page lock before its snapshot, and a write fault in a shared
 * shmem mapping takes the page lock and re-arms the executable mappings
 * of the page (an i_mmap walk) before the PTE becomes writable.
 *
 * An address space is tracked while per-task events with attr.flowjit
 * that do not exclude user space target a task using it, and for life
 * when a task forked from a tracked one inherited such events. Arming its
 * existing pages runs in the target itself (task work), where taking
 * its mmap_lock is safe. When the last event goes, the PTEs are left
 * as they are: the next instruction fetch from such a page finds the
 * address space untracked, makes the page executable again and has the
 * task disarm its VMAs (task work too).
 */
#include <linux/hash.h>
#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mmu_notifier.h>
#include <linux/ptrace.h>
#include <linux/pagemap.h>
#include <linux/rmap.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <asm/tlb.h>
#include <asm/tlbflush.h>

#include "base.h"
#include "internal.h"

/*
 * The last snapshot of a page, so that a page re-armed without a change
 * of its bytes (a W^X flip, a rewrite with the same bytes) is not
 * reported again. Direct mapped by address: a slot lost to another page
 * costs a duplicate record, never a missed one.
 *
 * While an event takes delta records, a slot also keeps a copy of the
 * bytes of revision @rev (as its pieces over zeros, while it is one), so
 * that the next revision of the page can go as the blocks that changed.
 * The copy is a base only if no record could be written since (@gen,
 * flowjit_lost_gen()); a slot given to another
 * page, a page that moved, fork and a new event empty the slot, so the
 * page's next revision goes whole (as a delta against zeros, base 0,
 * where that is shorter). At most FLOWJIT_SEEN_SLOTS pages (and half a
 * page of pieces each) an address space, charged to its memory cgroup,
 * freed with it.
 */
#define FLOWJIT_SEEN_BITS	9
#define FLOWJIT_SEEN_SLOTS	BIT(FLOWJIT_SEEN_BITS)

struct flowjit_seen {
	unsigned long	page;		/* 0: empty */
	u32		csum;		/* flowjit_csum() of its bytes */
	u32		rev;		/* of the copy; 0: no base */
	u32		gen;		/* flowjit_lost_gen() of @rev */
	u8		*bytes;		/* the copy: PAGE_SIZE, or NULL */
	/* or, if @sparse_len, the copy as pieces over zeros */
	u8		*sparse;
	u32		sparse_len, sparse_size;
};

/*
 * Per address space state, hung off mm->flowjit on first use and freed
 * with the mm. Other address spaces read it too: the alias walk of a
 * shared page (__flowjit_rearm_aliases()) asks whether the mm of each
 * executable mapping is tracked, and finds the mappings of an exiting mm
 * until exit_mmap() unlinks them, after flowjit_mm_exit() ran. So it is
 * freed after an RCU grace period, and such readers hold rcu_read_lock().
 */
struct flowjit_mm {
	u64		asid;		/* never reused in a boot */
	atomic64_t	revision;	/* of the last snapshot, any page */
	atomic_t	users;		/* events tracking this mm */
	bool		retired;	/* the retire record is written */
	spinlock_t	seen_lock;	/* protects seen[] */
	struct flowjit_seen *seen;	/* FLOWJIT_SEEN_SLOTS, or NULL */
	struct rcu_head	rcu;		/* for kfree_rcu() */
};

/*
 * Which mm each tracking event counts in, so that its count goes where
 * it was added even after the target has exec'd.
 */
struct flowjit_tracker {
	struct list_head	node;
	struct perf_event	*event;
	struct mm_struct	*mm;	/* mmgrab()ed */
};

static LIST_HEAD(flowjit_trackers);
static DEFINE_MUTEX(flowjit_trackers_lock);
static atomic64_t flowjit_next_asid = ATOMIC64_INIT(FLOWJIT_ASID_KERNEL);

atomic_t flowjit_tracked_mms = ATOMIC_INIT(0);

/* one more (or one fewer) event or inherited task tracks @fm's mm */
static void flowjit_mm_user_inc(struct flowjit_mm *fm)
{
	if (atomic_inc_return(&fm->users) == 1)
		atomic_inc(&flowjit_tracked_mms);
}

static void flowjit_mm_user_dec(struct flowjit_mm *fm)
{
	if (atomic_dec_return(&fm->users) == 0)
		atomic_dec(&flowjit_tracked_mms);
}

/*
 * Shared memory files without a name: memfd, MAP_SHARED|MAP_ANONYMOUS,
 * SysV shm, unlinked tmpfs files. Decoders cannot read their code from
 * a file, so it is tracked as anonymous memory is.
 */
bool flowjit_file_trackable(struct file *file)
{
	return shmem_file(file) && !file_inode(file)->i_nlink;
}

/*
 * A mapping of a shmem file. vma_is_shmem() does not see SysV shm, whose
 * VMAs have the IPC layer's file and operations over a shmem inode.
 */
bool flowjit_vma_shmem(struct vm_area_struct *vma)
{
	return vma->vm_file && shmem_mapping(vma->vm_file->f_mapping);
}

static bool flowjit_event_tracks_user(struct perf_event *event)
{
	return event->attr.flowjit && !event->attr.exclude_user &&
	       (event->attach_state & PERF_ATTACH_TASK);
}

/* the state of @mm, allocated if needed; NULL if out of memory */
static struct flowjit_mm *flowjit_mm_get_state(struct mm_struct *mm)
{
	struct flowjit_mm *fm = READ_ONCE(mm->flowjit);

	if (fm)
		return fm;
	fm = kzalloc(sizeof(*fm), GFP_KERNEL_ACCOUNT);
	if (!fm)
		return NULL;
	fm->asid = atomic64_inc_return(&flowjit_next_asid);
	spin_lock_init(&fm->seen_lock);
	/* pairs with READ_ONCE() above and in flowjit_mm_tracked() */
	if (cmpxchg(&mm->flowjit, NULL, fm)) {
		kfree(fm);
		fm = READ_ONCE(mm->flowjit);
	}
	return fm;
}

/* CPU-wide events that track every user address space */
static atomic_t flowjit_all_users = ATOMIC_INIT(0);

/*
 * Does an event track @fm's address space? Unlike flowjit_fm_tracked(),
 * not changed by kernel.flowjit: with the sysctl 0 the VMAs stay armed,
 * so that what is mapped meanwhile is tracked when it is 1 again.
 */
static bool flowjit_fm_watched(struct flowjit_mm *fm)
{
	return fm && (atomic_read(&fm->users) > 0 ||
		      atomic_read(&flowjit_all_users) > 0);
}

/*
 * Is the address space of @fm tracked? Not while kernel.flowjit is 0:
 * then its pages become executable on their next fetch, and new
 * mappings are not armed, as when the last event has gone.
 */
static bool flowjit_fm_tracked(struct flowjit_mm *fm)
{
	return flowjit_fm_watched(fm) && flowjit_enabled();
}

/*
 * Is @mm tracked? The caller holds a reference on @mm's users (its own
 * mm, get_task_mm()), or rcu_read_lock() (see struct flowjit_mm).
 */
bool flowjit_mm_tracked(struct mm_struct *mm)
{
	return flowjit_fm_tracked(READ_ONCE(mm->flowjit));
}

/* the same for a mm found through a file's i_mmap: it may be exiting */
static bool flowjit_other_mm_tracked(struct mm_struct *mm)
{
	bool tracked;

	rcu_read_lock();
	tracked = flowjit_mm_tracked(mm);
	rcu_read_unlock();
	return tracked;
}

/* The page protection of a tracked VMA: never executable. */
pgprot_t __flowjit_vm_page_prot(struct vm_area_struct *vma, pgprot_t prot)
{
	if (flowjit_vma_trackable(vma) && flowjit_mm_tracked(vma->vm_mm))
		return pgprot_nx(prot);
	return prot;
}

/*
 * Give the VMAs of @mm flowjit tracks (with @armed_only, those it armed)
 * the protection vma_set_page_prot() computes now, PTEs included, as
 * mprotect() would: non-executable while @mm is tracked (arming), what
 * the VMA flags give otherwise (disarming). mmap_lock held for write.
 */
static void flowjit_reprotect_mm(struct mm_struct *mm, bool armed_only)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct vm_area_struct *vma;
	struct mmu_gather tlb;

	tlb_gather_mmu(&tlb, mm);
	for_each_vma(vmi, vma) {
		if (!flowjit_vma_trackable(vma) ||
		    (armed_only && !flowjit_vma_armed(vma)))
			continue;
		flowjit_vma_start_write(vma);
		vma_set_page_prot(vma);
		flowjit_reapply_prot(&tlb, vma, vma->vm_start, vma->vm_end);
	}
	tlb_finish_mmu(&tlb);
}

/*
 * The table of last snapshots, allocated in the tracked task itself (a
 * fault or its arming) and charged to its memory cgroup.
 */
static void flowjit_seen_alloc(struct flowjit_mm *fm)
{
	struct flowjit_seen *seen;

	if (READ_ONCE(fm->seen))
		return;
	seen = kcalloc(FLOWJIT_SEEN_SLOTS, sizeof(*seen), GFP_KERNEL_ACCOUNT);
	if (seen && cmpxchg(&fm->seen, NULL, seen))
		kfree(seen);
}

/* forget the snapshots of [start, end): the next ones are reported */
static void flowjit_seen_forget(struct flowjit_mm *fm, unsigned long start,
				unsigned long end)
{
	unsigned int i;

	if (!READ_ONCE(fm->seen))
		return;
	spin_lock(&fm->seen_lock);
	for (i = 0; i < FLOWJIT_SEEN_SLOTS; i++)
		if (fm->seen[i].page >= start && fm->seen[i].page < end)
			fm->seen[i].page = 0;
	spin_unlock(&fm->seen_lock);
}

#define FLOWJIT_GFP	(GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN)

/*
 * Keep a revision that went over zeros as what it was, its pieces and
 * their bytes (far less than a page, for a JIT's fresh page): the copy
 * of the page is only made if another revision comes.
 */
static bool flowjit_seen_sparse(struct flowjit_seen *s,
				const struct flowjit_image *img)
{
	unsigned int i;
	u8 *at;

	if (img->delta_len > s->sparse_size) {
		at = krealloc(s->sparse, img->delta_len, FLOWJIT_GFP);
		if (!at)
			return false;
		s->sparse = at;
		s->sparse_size = img->delta_len;
	}
	at = s->sparse;
	for (i = 0; i < img->npieces; i++) {
		memcpy(at, &img->pieces[i], sizeof(img->pieces[i]));
		at += sizeof(img->pieces[i]);
		memcpy(at, img->bytes + img->pieces[i].off, img->pieces[i].len);
		at += img->pieces[i].len;
	}
	s->sparse_len = img->delta_len;
	return true;
}

/* the copy of a revision kept sparse, made whole: false if out of memory */
static bool flowjit_seen_dense(struct flowjit_seen *s)
{
	struct flowjit_delta_piece piece;
	u32 at = 0;

	if (!s->sparse_len)
		return s->bytes;
	if (!s->bytes)
		s->bytes = kmalloc(PAGE_SIZE, FLOWJIT_GFP);
	if (!s->bytes)
		return false;
	clear_page(s->bytes);
	while (at < s->sparse_len) {
		memcpy(&piece, s->sparse + at, sizeof(piece));
		at += sizeof(piece);
		memcpy(s->bytes + piece.off, s->sparse + at, piece.len);
		at += piece.len;
	}
	s->sparse_len = 0;
	return true;
}

/* how a revision goes: whole, as a delta over the copy, or over zeros */
enum flowjit_seen_how {
	FLOWJIT_SEEN_WHOLE,
	FLOWJIT_SEEN_BASE,
	FLOWJIT_SEEN_ZEROS,
};

/*
 * Are deltas wanted for @img, and is the copy in @s a base for it (this
 * page's, a revision, and kept since the last lost record: @gen)?
 */
static enum flowjit_seen_how flowjit_seen_how(const struct flowjit_seen *s,
					      const struct flowjit_image *img,
					      u32 gen)
{
	if (!flowjit_deltas_wanted() || (img->flags & FLOWJIT_F_PINNED))
		return FLOWJIT_SEEN_WHOLE;
	if (s->rev && s->page == img->addr && s->gen == gen)
		return FLOWJIT_SEEN_BASE;
	return FLOWJIT_SEEN_ZEROS;
}

/*
 * @img is to be recorded, its bytes the page's: make it a delta against
 * the copy in @s if that is a base, else against zeros (base 0: a whole
 * image without its zero blocks, which needs no base; its pieces are
 * already found if that was @how), and keep its bytes as the next base.
 * Called under seen_lock, with the page read-only in every TLB. A pinned
 * page's bytes may change under the copy: it goes whole, and is no base.
 */
static void flowjit_seen_keep(struct flowjit_seen *s,
			      struct flowjit_image *img,
			      struct flowjit_delta_piece *pieces,
			      u32 gen, enum flowjit_seen_how how)
{
	img->pieces = pieces;
	if (how == FLOWJIT_SEEN_WHOLE) {
		s->rev = 0;
		return;
	}
	if (how == FLOWJIT_SEEN_BASE && flowjit_seen_dense(s)) {
		/* the copy becomes this revision as the blocks are compared */
		img->npieces = flowjit_delta_pieces(s->bytes, img->bytes,
						    PAGE_SIZE, pieces,
						    &img->delta_len, true);
		img->base = s->rev;
		s->rev = img->revision;
		s->gen = gen;
		return;
	}
	if (how != FLOWJIT_SEEN_ZEROS)
		img->npieces = flowjit_delta_pieces(NULL, img->bytes,
						    PAGE_SIZE, pieces,
						    &img->delta_len, false);
	s->rev = 0;
	s->sparse_len = 0;
	if (img->npieces) {
		if (!flowjit_seen_sparse(s, img))
			return;
	} else {
		if (!s->bytes)
			s->bytes = kmalloc(PAGE_SIZE, FLOWJIT_GFP);
		if (!s->bytes)
			return;
		copy_page(s->bytes, (void *)img->bytes);
	}
	s->rev = img->revision;
	s->gen = gen;
}

/*
 * A delta over zeros of a few pieces: its CRC from their bytes (see
 * flowjit_csum_sparse()); more cost more than one pass over the page.
 */
#define FLOWJIT_CSUM_SPARSE_PIECES	2

/*
 * Should @img, a snapshot of its page, be recorded (is it not the last
 * snapshot's bytes, or pinned)? Remember it as the last, and give it its
 * checksum, its revision and, if it can be one, its delta. A page that
 * will go over zeros is compared first, so that its checksum can come
 * from what is not zero.
 */
static bool flowjit_seen_record(struct flowjit_mm *fm,
				struct flowjit_image *img,
				struct flowjit_delta_piece *pieces)
{
	enum flowjit_seen_how how;
	struct flowjit_seen *s;
	bool record;
	u32 gen;

	img->has_csum = true;
	if (!READ_ONCE(fm->seen)) {
		img->csum = flowjit_csum(img->bytes, PAGE_SIZE);
		img->revision = atomic64_inc_return(&fm->revision);
		return true;
	}
	spin_lock(&fm->seen_lock);
	s = &fm->seen[hash_long(img->addr >> PAGE_SHIFT, FLOWJIT_SEEN_BITS)];
	gen = flowjit_lost_gen();
	how = flowjit_seen_how(s, img, gen);
	if (how == FLOWJIT_SEEN_ZEROS)
		img->npieces = flowjit_delta_pieces(NULL, img->bytes,
						    PAGE_SIZE, pieces,
						    &img->delta_len, false);
	if (img->npieces && img->npieces <= FLOWJIT_CSUM_SPARSE_PIECES)
		img->csum = flowjit_csum_sparse(img->bytes, PAGE_SIZE, pieces,
						img->npieces);
	else
		img->csum = flowjit_csum(img->bytes, PAGE_SIZE);
	record = s->page != img->addr || s->csum != img->csum || img->flags;
	if (record) {
		img->revision = atomic64_inc_return(&fm->revision);
		flowjit_seen_keep(s, img, pieces, gen, how);
	} else {
		img->npieces = 0;
	}
	s->page = img->addr;
	s->csum = img->csum;
	spin_unlock(&fm->seen_lock);
	return record;
}

static void flowjit_seen_free(struct flowjit_mm *fm)
{
	unsigned int i;

	if (!fm->seen)
		return;
	for (i = 0; i < FLOWJIT_SEEN_SLOTS; i++) {
		kfree(fm->seen[i].bytes);
		kfree(fm->seen[i].sparse);
	}
	kfree(fm->seen);
}

/*
 * No event tracks current's address space any more: give its armed VMAs
 * the protection their flags give, PTEs included (as mprotect() would
 * with the same flags), so that new code pages do not take an
 * instruction fetch fault each for as long as it lives, and khugepaged
 * does not collapse into non-executable PMDs that the next fetch splits.
 */
static void flowjit_disarm_work(struct callback_head *head)
{
	struct mm_struct *mm = current->mm;

	kfree(head);
	if (!mm)
		return;
	mmap_write_lock(mm);
	/* tracked again meanwhile: the arming has its own work */
	if (!flowjit_fm_watched(READ_ONCE(mm->flowjit)))
		flowjit_reprotect_mm(mm, true);
	mmap_write_unlock(mm);
}

/*
 * An instruction fetch found a page flowjit armed in an address space no
 * event tracks (tracking ended, or a child forked untracked from a
 * tracked process inherited the protection): disarm it before current
 * returns to user space. One fault per address space queues it.
 */
static void flowjit_queue_disarm(void)
{
	struct callback_head *work = kmalloc(sizeof(*work), GFP_KERNEL);

	if (!work)
		return;		/* the next fetch fault tries again */
	kfree(task_work_cancel_func(current, flowjit_disarm_work));
	init_task_work(work, flowjit_disarm_work);
	if (task_work_add(current, work, TWA_RESUME))
		kfree(work);
}

static void flowjit_arm_work(struct callback_head *head)
{
	struct mm_struct *mm = current->mm;
	struct flowjit_mm *fm;

	kfree(head);
	if (mm && atomic_read(&flowjit_all_users))
		flowjit_mm_get_state(mm);
	if (!mm || !flowjit_mm_tracked(mm))
		return;
	/* a new event sees every page again: report them all again */
	fm = READ_ONCE(mm->flowjit);
	flowjit_seen_alloc(fm);
	flowjit_seen_forget(fm, 0, ULONG_MAX);
	mmap_write_lock(mm);
	flowjit_reprotect_mm(mm, false);
	mmap_write_unlock(mm);
}

/*
 * Have @task arm its address space before it next runs user code:
 * TWA_RESUME runs the work on its way back to user space (and kicks it
 * if it is running there). Not TWA_SIGNAL, which would interrupt a
 * system call it is blocked in: epoll_wait() and others return -EINTR
 * to user space on any pending notification. An arming already pending
 * on @task is taken back and queued again, so that however many events
 * ask, a task has one queued; @spare is queued if there is none.
 * Returns whether @spare was used (queued, or freed as @task exits).
 */
static bool flowjit_queue_arm_work(struct task_struct *task,
				   struct callback_head *spare)
{
	struct callback_head *work = task_work_cancel_func(task, flowjit_arm_work);
	bool used = !work;

	if (!work)
		work = spare;
	init_task_work(work, flowjit_arm_work);
	if (task_work_add(task, work, TWA_RESUME))
		kfree(work);	/* exiting: nothing to arm */
	return used;
}

static int flowjit_queue_arm(struct task_struct *task)
{
	struct callback_head *spare = kmalloc(sizeof(*spare), GFP_KERNEL);

	if (!spare)
		return -ENOMEM;
	if (!flowjit_queue_arm_work(task, spare))
		kfree(spare);
	return 0;
}

static int flowjit_track(struct perf_event *event, struct mm_struct *mm)
{
	struct flowjit_tracker *t;
	struct flowjit_mm *fm;

	fm = flowjit_mm_get_state(mm);
	t = kmalloc(sizeof(*t), GFP_KERNEL);
	if (!fm || !t) {
		kfree(t);
		return -ENOMEM;
	}
	t->event = event;
	t->mm = mm;
	mmgrab(mm);
	mutex_lock(&flowjit_trackers_lock);
	list_add(&t->node, &flowjit_trackers);
	flowjit_mm_user_inc(fm);
	mutex_unlock(&flowjit_trackers_lock);
	return 0;
}

static struct flowjit_tracker *flowjit_find_tracker(struct perf_event *event)
{
	struct flowjit_tracker *t;

	lockdep_assert_held(&flowjit_trackers_lock);
	list_for_each_entry(t, &flowjit_trackers, node) {
		if (t->event == event)
			return t;
	}
	return NULL;
}

/* drop @t's count on its mm; flowjit_trackers_lock held */
static void flowjit_untrack_locked(struct flowjit_tracker *t)
{
	struct flowjit_mm *fm = READ_ONCE(t->mm->flowjit);

	if (fm)
		flowjit_mm_user_dec(fm);
	mmdrop(t->mm);
}

/*
 * perf_event_open() of a per-task event, after perf's own permission
 * check, with the target's exec_update_lock held. Snapshotting another
 * process's code reads its memory: require what process_vm_readv()
 * requires. Returns 0 or -errno.
 */
int flowjit_perf_event_attach(struct perf_event *event, struct task_struct *task)
{
	struct mm_struct *mm;
	int err;

	if (!flowjit_event_tracks_user(event))
		return 0;
	if (!ptrace_may_access(task, PTRACE_MODE_ATTACH_REALCREDS))
		return -EACCES;
	mm = get_task_mm(task);
	if (!mm)
		return 0;	/* a kernel thread or exiting: nothing to track */
	err = flowjit_track(event, mm);
	mmput(mm);
	if (!err)
		err = flowjit_queue_arm(task);
	return err;
}

static bool flowjit_event_tracks_all(struct perf_event *event)
{
	return event->attr.flowjit && !event->attr.exclude_user &&
	       !(event->attach_state & PERF_ATTACH_TASK);
}

/* a thread of @p that runs user code, or NULL; rcu_read_lock() held */
static struct task_struct *flowjit_user_thread(struct task_struct *p)
{
	struct task_struct *t;

	if (p->flags & PF_KTHREAD)
		return NULL;
	/* the main thread may have exited (pthread_exit()) before the rest */
	for_each_thread(p, t) {
		if (!(t->flags & (PF_EXITING | PF_IO_WORKER)) &&
		    READ_ONCE(t->mm))
			return t;
	}
	return NULL;
}

/*
 * Have every user process arm its address space, from task work, as a
 * per-task event has its target do. Called for each CPU-wide event that
 * tracks user space, as every session needs the code already running
 * reported to its events; a session's per-CPU events are opened one after
 * the other, and an arming still pending is reused, so each process has
 * at most one queued. for_each_process() runs under RCU: the callbacks
 * are allocated before, and again for what a pass could not queue.
 * Processes created meanwhile are armed by their fork (flowjit_mm_fork()),
 * or have nothing to arm yet (exec).
 */
static void flowjit_arm_all(void)
{
	struct callback_head *pool = NULL, *work;
	int n = nr_processes() + 8, missed, tries = 3;
	struct task_struct *p, *t;

	do {
		for (; n > 0; n--) {
			work = kmalloc(sizeof(*work), GFP_KERNEL);
			if (!work)
				break;
			work->next = pool;
			pool = work;
		}
		missed = 0;
		rcu_read_lock();
		for_each_process(p) {
			t = flowjit_user_thread(p);
			if (!t)
				continue;
			if (!pool) {
				missed++;
				continue;
			}
			work = pool;
			pool = work->next;
			if (!flowjit_queue_arm_work(t, work)) {
				work->next = pool;
				pool = work;
			}
		}
		rcu_read_unlock();
		n = missed;
	} while (missed && --tries);
	while (pool) {
		work = pool;
		pool = work->next;
		kfree(work);
	}
	if (missed)
		pr_warn_ratelimited("flowjit: out of memory: %d processes run unobserved until they fork or exec\n",
				    missed);
}

/*
 * A perf event with attr.flowjit is created. A CPU-wide one that does
 * not exclude user space tracks every user address space while it
 * exists: perf's own CPU-wide permission is what it takes, as for
 * PERF_SAMPLE_STACK_USER, which copies user memory of every process.
 * perf checks that permission only after this (find_get_context()): an
 * event that will fail it must not count, or a loop of refused opens
 * would have every address space tracked (and new ones given flowjit
 * state) for a good part of the time. So the event counts only if it
 * passes, and remembers that it did for flowjit_perf_event_detach().
 */
void flowjit_perf_event_account(struct perf_event *event)
{
	if (!flowjit_event_tracks_all(event) || flowjit_perf_allow_cpu(event))
		return;
	event->flowjit_flags |= FLOWJIT_EVENT_ALL_MM;
	if (atomic_inc_return(&flowjit_all_users) == 1)
		atomic_inc(&flowjit_tracked_mms);
	flowjit_arm_all();
}

/* some event tracks every user address space (for the KUnit tests) */
bool flowjit_tracks_all(void)
{
	return atomic_read(&flowjit_all_users) > 0;
}

/* The event goes away: its address space may go back to normal. */
void flowjit_perf_event_detach(struct perf_event *event)
{
	struct flowjit_tracker *t;

	if (event->flowjit_flags & FLOWJIT_EVENT_ALL_MM) {
		event->flowjit_flags &= ~FLOWJIT_EVENT_ALL_MM;
		if (atomic_dec_return(&flowjit_all_users) == 0)
			atomic_dec(&flowjit_tracked_mms);
		return;
	}
	if (flowjit_event_tracks_all(event))
		return;		/* refused by perf: never counted */
	if (!flowjit_event_tracks_user(event))
		return;
	mutex_lock(&flowjit_trackers_lock);
	t = flowjit_find_tracker(event);
	if (t) {
		list_del(&t->node);
		flowjit_untrack_locked(t);
	}
	mutex_unlock(&flowjit_trackers_lock);
	kfree(t);
}

/*
 * perf keeps an event on its task across exec, unless it asked for
 * remove_on_exec (perf_event_remove_on_exec() runs after flowjit_exec()).
 */
static bool flowjit_event_follows_exec(struct perf_event *event)
{
	return flowjit_event_tracks_user(event) && !event->attr.remove_on_exec;
}

/*
 * After exec: the tracking of the events that target this task moves to
 * its new address space, which has no code yet, so nothing to arm. A
 * task that inherited such events has each of its address spaces
 * tracked for life (flowjit_mm_fork()), the one exec gave it too. Which
 * of its events are the inherited ones cannot be told from event->parent:
 * perf swaps equivalent contexts between parent and child at context
 * switches, so what is left untracked after the loop is that case.
 * Events that perf removes at exec stop tracking here. If the new image
 * turns out to raise privileges, perf detaches the events later in exec
 * and flowjit_exec_drop() undoes this.
 */
void flowjit_exec(void)
{
	struct mm_struct *mm = current->mm;
	struct flowjit_tracker *t, *tmp;
	struct flowjit_mm *fm;
	LIST_HEAD(dead);

	if (mm && atomic_read(&flowjit_all_users))
		flowjit_mm_get_state(mm);
	/*
	 * Only an event of this task can track its new address space: the
	 * exec of every other task allocates nothing and takes no lock
	 * while trackers exist elsewhere.
	 */
	if (!mm || list_empty_careful(&flowjit_trackers) ||
	    !perf_event_task_has(current, flowjit_event_tracks_user))
		return;
	fm = flowjit_mm_get_state(mm);
	mutex_lock(&flowjit_trackers_lock);
	list_for_each_entry_safe(t, tmp, &flowjit_trackers, node) {
		if (t->event->hw.target != current || t->mm == mm || !fm)
			continue;
		flowjit_untrack_locked(t);
		if (!flowjit_event_follows_exec(t->event)) {
			list_move(&t->node, &dead);
			continue;
		}
		mmgrab(mm);
		t->mm = mm;
		flowjit_mm_user_inc(fm);
	}
	mutex_unlock(&flowjit_trackers_lock);
	list_for_each_entry_safe(t, tmp, &dead, node)
		kfree(t);
	if (fm && !atomic_read(&fm->users) &&
	    perf_event_task_has(current, flowjit_event_follows_exec))
		flowjit_mm_user_inc(fm);
}

/*
 * Exec made the task non-dumpable (a setuid or setgid image, or one it
 * may not read): perf detaches the task's events after committing the
 * new credentials (begin_new_exec() calls perf_event_exit_task()), and
 * the tracking flowjit_exec() gave @mm ends with them, counted or
 * inherited, before the image runs or has code mapped: nothing to arm
 * or retire, and an arming queued by an open that raced the exec finds
 * @mm untracked. The trackers die with the detached events.
 */
static void flowjit_exec_drop(struct mm_struct *mm)
{
	struct flowjit_tracker *t, *tmp;
	struct flowjit_mm *fm;
	LIST_HEAD(dead);

	mutex_lock(&flowjit_trackers_lock);
	list_for_each_entry_safe(t, tmp, &flowjit_trackers, node) {
		if (t->mm != mm)
			continue;
		flowjit_untrack_locked(t);
		list_move(&t->node, &dead);
	}
	/*
	 * What is left is the count flowjit_exec() gave a task with
	 * inherited events: at most one, and no open can add to it while
	 * exec holds exec_update_lock.
	 */
	fm = READ_ONCE(mm->flowjit);
	if (fm && atomic_read(&fm->users))
		flowjit_mm_user_dec(fm);
	WARN_ON_ONCE(fm && atomic_read(&fm->users));
	mutex_unlock(&flowjit_trackers_lock);
	list_for_each_entry_safe(t, tmp, &dead, node)
		kfree(t);
}

/* [@addr, @addr + @len) of @fm holds no code any more */
static void flowjit_user_retire(struct flowjit_mm *fm, u64 addr, u64 len)
{
	struct flowjit_image img = {
		.kind		= FLOWJIT_KIND_USER_JIT,
		.op		= FLOWJIT_OP_RETIRE,
		.asid		= fm->asid,
		.addr		= addr,
		.len		= len,
	};

	flowjit_emit(&img);
}

/*
 * Snapshot the page at @addr of @page; it is read-only in every TLB.
 * Bytes that are the page's last snapshot are not reported again.
 * @ip is the user IP whose instruction fetch faulted, 0 if unknown: a
 * trace shows the fault there (FUP, TIP.PGD, then TIP.PGE at the same
 * IP), and a decoder ties the revision to that event (rec.id).
 *
 * A page pinned by get_user_pages(FOLL_PIN) (io_uring fixed buffers,
 * O_DIRECT, RDMA, vfio) can be written by the kernel or a device without
 * any page table: its bytes may change while it is executable and no
 * fault tells us. Such a snapshot is always written, flagged
 * FLOWJIT_F_PINNED, so that a reader knows the revision is not certain
 * from its time on (the pin that writes was taken with FOLL_WRITE,
 * whose fault re-armed the page: the exec fault after it comes here).
 */
static void flowjit_snapshot(struct flowjit_mm *fm, unsigned long addr,
			     struct page *page, u64 ip)
{
	struct flowjit_delta_piece pieces[FLOWJIT_DELTA_PIECES];
	bool pinned = folio_maybe_dma_pinned(page_folio(page));
	void *kaddr = kmap_local_page(page);
	struct flowjit_image img = {
		.kind		= FLOWJIT_KIND_USER_JIT,
		.op		= FLOWJIT_OP_IMAGE,
		.flags		= pinned ? FLOWJIT_F_PINNED : 0,
		.asid		= fm->asid,
		.addr		= addr,
		.len		= PAGE_SIZE,
		.id		= ip,
		.bytes		= kaddr,
	};

	if (flowjit_seen_record(fm, &img, pieces))
		flowjit_emit(&img);
	kunmap_local(kaddr);
}

/* the user IP of the instruction fetch that faulted, 0 if none */
static u64 flowjit_fault_ip(struct vm_fault *vmf)
{
	struct pt_regs *regs = task_pt_regs(current);

	if (!(vmf->flags & FAULT_FLAG_USER) || !user_mode(regs))
		return 0;
	return instruction_pointer(regs);
}

/*
 * An instruction fetch hit a present, non-executable PTE of an
 * executable VMA it tracks. In a tracked address space, snapshot the
 * page and make it executable and read-only; otherwise the page is left
 * over from tracking that ended: make it executable again.
 */
vm_fault_t flowjit_handle_exec_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct mm_struct *mm = vma->vm_mm;
	unsigned long addr = vmf->address & PAGE_MASK;
	struct flowjit_mm *fm = READ_ONCE(mm->flowjit);
	struct page *page, *locked = NULL;
	bool tracked = flowjit_fm_tracked(fm), notify = false;
	struct address_space *mapping;
	struct mmu_notifier_range range;
	pte_t entry, old;

	/*
	 * What may sleep comes first, with the PTE unmapped: a mapped PTE
	 * holds rcu_read_lock() where page tables are freed by RCU (6.12).
	 * The PTE is looked at again under its lock. Mostly nothing may:
	 * a W^X page's PTE is not writable, and the table of last
	 * snapshots is there after the first fault. Then the PTE is locked
	 * where it is mapped, as handle_pte_fault() would (on 6.12 the
	 * unmap and map again took about 200 instructions of a fault).
	 */
	if (tracked && (!READ_ONCE(fm->seen) || pte_write(vmf->orig_pte))) {
		pte_unmap(vmf->pte);
		flowjit_seen_alloc(fm);
		if (pte_write(vmf->orig_pte)) {
			/* secondary MMUs (KVM, SVA) lose write access too */
			flowjit_notifier_range_init(&range, vma, addr,
						    addr + PAGE_SIZE);
			mmu_notifier_invalidate_range_start(&range);
			notify = true;
		}
		if (!flowjit_fault_relock(vmf))
			goto out;	/* the page table went: fault again */
	} else {
		flowjit_fault_lock(vmf);
	}
again:
	entry = vmf->orig_pte;
	if (unlikely(!pte_same(ptep_get(vmf->pte), entry))) {
		update_mmu_tlb(vma, vmf->address, vmf->pte);
		goto unlock;
	}
	page = vm_normal_page(vma, addr, entry);
	if (tracked && page && !PageAnon(page) &&
	    !locked) {
		/*
		 * A page of a shared file: other mappings of it may write
		 * it. Write-protect them under the page lock, which their
		 * write faults take before re-arming this mapping
		 * (flowjit_rearm_aliases()), then look again. From now on
		 * the file's writable mappings map its pages read-only and
		 * their writes fault (flowjit_shared_code()): a write fault
		 * that finds a PTE write-protected here sees the flag under
		 * that PTE's lock, a read fault under the page lock.
		 */
		get_page(page);
		pte_unmap_unlock(vmf->pte, vmf->ptl);
		lock_page(page);
		locked = page;
		mapping = folio_mapping(page_folio(page));
		if (mapping && shmem_mapping(mapping) &&
		    !test_bit(AS_FLOWJIT_CODE, &mapping->flags))
			set_bit(AS_FLOWJIT_CODE, &mapping->flags);
		if (folio_mkclean(page_folio(page)))
			set_page_dirty(page);	/* keep what the PTEs knew */
		if (!flowjit_fault_relock(vmf))
			goto out;	/* the page table went: fault again */
		goto again;
	}
	if (tracked && page) {
		/*
		 * No CPU may write the page while it is copied. Clearing RW
		 * atomically keeps a dirty bit the hardware sets meanwhile.
		 */
		if (pte_write(entry)) {
			ptep_set_wrprotect(mm, addr, vmf->pte);
			flush_tlb_page(vma, addr);
		}
		flowjit_snapshot(fm, addr, page, flowjit_fault_ip(vmf));
	}
	/*
	 * The PTE may be writable (a shared writable and executable mapping
	 * once tracking ended): keep a dirty bit the hardware sets meanwhile.
	 */
	old = ptep_modify_prot_start(vma, addr, vmf->pte);
	entry = pte_mkyoung(pte_mkexec(old));
	ptep_modify_prot_commit(vma, addr, vmf->pte, old, entry);
	update_mmu_cache(vma, addr, vmf->pte);
unlock:
	pte_unmap_unlock(vmf->pte, vmf->ptl);
out:
	if (notify)
		mmu_notifier_invalidate_range_end(&range);
	if (locked) {
		unlock_page(locked);
		put_page(locked);
	}
	if (!flowjit_fm_watched(fm) && flowjit_vma_armed(vma))
		flowjit_queue_disarm();
	return 0;
}

/* @pte, made non-executable */
static pte_t flowjit_pte_mknx(pte_t pte)
{
	return pte_modify(pte, pgprot_nx(pte_pgprot(pte)));
}

/*
 * @page, locked, is about to become writable through @except (a write
 * fault in a shared mapping): re-arm every other executable mapping of
 * it in a tracked address space, so that its next instruction fetch
 * snapshots what is written now. The page lock orders this against the
 * exec fault, which write-protects the writable mappings under it before
 * its snapshot. The mappings are found as the reverse map finds them:
 * the VMAs under i_mmap_rwsem keep their page tables (free_pgtables()
 * unlinks them first), and page_vma_mapped_walk() finds the page mapped
 * by a PTE or a PMD. Their mm may be exiting, its flowjit state already
 * freed (RCU, see struct flowjit_mm).
 */
void __flowjit_rearm_aliases(struct vm_area_struct *except, struct page *page)
{
	struct address_space *mapping = folio_mapping(page_folio(page));
	pgoff_t pgoff = page_to_pgoff(page);
	struct vm_area_struct *vma;

	/* no snapshot was taken of the file: nothing to re-arm */
	if (!mapping || !shmem_mapping(mapping) ||
	    !test_bit(AS_FLOWJIT_CODE, &mapping->flags))
		return;
	i_mmap_lock_read(mapping);
	vma_interval_tree_foreach(vma, &mapping->i_mmap, pgoff, pgoff) {
		/* this 4 KiB page only, also of a huge folio */
		struct page_vma_mapped_walk pvmw = {
			.pfn = page_to_pfn(page),
			.nr_pages = 1,
			.pgoff = pgoff,
			.vma = vma,
			.address = vma->vm_start +
				   ((pgoff - vma->vm_pgoff) << PAGE_SHIFT),
		};

		if (vma == except || !flowjit_vma_trackable(vma) ||
		    !flowjit_other_mm_tracked(vma->vm_mm))
			continue;
		while (page_vma_mapped_walk(&pvmw)) {
			pte_t pte;

			/*
			 * Mapped by a PMD: mapped before tracking began,
			 * and made non-executable by the arming (before
			 * it, nothing is re-armed anyway). A fetch splits
			 * it, and no new one is mapped while the VMA's
			 * protection is non-executable.
			 */
			if (!pvmw.pte)
				continue;
			pte = ptep_get(pvmw.pte);
			if (!pte_exec(pte))
				continue;
			/* it may be writable: keep the dirty bit */
			pte = ptep_modify_prot_start(vma, pvmw.address,
						     pvmw.pte);
			ptep_modify_prot_commit(vma, pvmw.address, pvmw.pte,
						pte, flowjit_pte_mknx(pte));
			flush_tlb_page(vma, pvmw.address);
		}
	}
	i_mmap_unlock_read(mapping);
}

/*
 * A huge PMD of a VMA flowjit tracks is non-executable: snapshots are
 * taken 4 KiB at a time, so split the mapping (the folio stays huge).
 */
void __flowjit_split_huge_exec(struct vm_fault *vmf)
{
	split_huge_pmd(vmf->vma, vmf->pmd, vmf->address);
}

/*
 * A write fault is about to make a page of a tracked VMA writable:
 * take execute away first, from every TLB. Returns true if it set the
 * PTE to @entry itself.
 */
bool __flowjit_rearm_pte(struct vm_area_struct *vma, unsigned long addr,
			 pte_t *ptep, pte_t entry)
{
	pte_t old;

	if (!pte_exec(entry) || !flowjit_mm_tracked(vma->vm_mm))
		return false;
	/* the PTE is live (read-only): change it as mprotect() does */
	old = ptep_modify_prot_start(vma, addr, ptep);
	ptep_modify_prot_commit(vma, addr, ptep, old,
				flowjit_pte_mknx(entry));
	flush_tlb_page(vma, addr);
	update_mmu_cache(vma, addr, ptep);
	return true;
}

/*
 * [start, end) of a tracked VMA holds no code any more (munmap, mremap
 * away, MADV_DONTNEED): say so, so that decoders stop using its images.
 */
void __flowjit_retire_range(struct vm_area_struct *vma, unsigned long start,
			    unsigned long end)
{
	struct flowjit_mm *fm = READ_ONCE(vma->vm_mm->flowjit);

	if (!flowjit_fm_tracked(fm) || !flowjit_vma_trackable(vma))
		return;
	start = max(start, vma->vm_start);
	end = min(end, vma->vm_end);
	flowjit_seen_forget(fm, start, end);
	if (start < end)
		flowjit_user_retire(fm, start, end - start);
}

/* mremap() moved [old, old + len) of a tracked VMA into @vma at @new. */
void __flowjit_moved_range(struct vm_area_struct *vma, unsigned long new,
			   unsigned long len)
{
	struct mmu_gather tlb;

	if (!flowjit_vma_trackable(vma) || !flowjit_mm_tracked(vma->vm_mm))
		return;
	/*
	 * The pages are at a new address now: their images are not. The
	 * protection is computed again: it may have to be read-only now
	 * (vma_wants_writenotify() for a file flowjit took code from).
	 */
	flowjit_vma_start_write(vma);
	vma_set_page_prot(vma);
	tlb_gather_mmu(&tlb, vma->vm_mm);
	flowjit_reapply_prot(&tlb, vma, new, new + len);
	tlb_finish_mmu(&tlb);
}

/*
 * fork: the child's address space is a copy of @oldmm, NX vm_page_prot
 * included. It is tracked if every address space is, or for as long as
 * it lives if @tsk inherited events that ask for its code
 * (perf_event_init_task() ran before copy_mm()): inherited events are
 * not counted one by one. A tracked child has an asid of its own, and
 * decoders have no image of the code under it, which it may run without
 * writing it first: arm it, here, where no one else can use it yet (the
 * seen table of its new state is empty, so its pages are reported
 * again). Otherwise its pages become executable on first use.
 */
void flowjit_mm_fork(struct mm_struct *oldmm, struct mm_struct *mm,
		     struct task_struct *tsk)
{
	struct flowjit_mm *fm;

	if (atomic_read(&flowjit_all_users)) {
		fm = flowjit_mm_get_state(mm);	/* tracked as every mm is */
	} else {
		if (!flowjit_mm_tracked(oldmm) ||
		    !perf_event_task_has(tsk, flowjit_event_tracks_user))
			return;
		fm = flowjit_mm_get_state(mm);
		if (fm)
			flowjit_mm_user_inc(fm);
	}
	/* with kernel.flowjit 0 the copied protection waits for it to be 1 */
	if (!flowjit_fm_tracked(fm))
		return;
	mmap_write_lock(mm);
	flowjit_reprotect_mm(mm, false);
	mmap_write_unlock(mm);
}

void flowjit_mm_init(struct mm_struct *mm)
{
	mm->flowjit = NULL;
}

/*
 * perf_event_exit_task(), called when the task exits and when it execs a
 * non-dumpable image. At exit its perf events go before its address
 * space does (perf_event_exit_task() runs before exit_mm()): if it is the
 * last user, retire the address space now, while its own events still
 * see it.
 */
void flowjit_task_exit(struct task_struct *tsk)
{
	struct mm_struct *mm = tsk->mm;
	struct flowjit_mm *fm;

	if (!mm)
		return;
	/* the other caller: exec of an image that is not dumpable */
	if (!(tsk->flags & PF_EXITING)) {
		if (READ_ONCE(mm->flowjit))
			flowjit_exec_drop(mm);
		return;
	}
	/*
	 * The last user; or a thread group that exits as a whole
	 * (exit_group(), a fatal signal), whose threads may all pass here
	 * with mm_users above 1, none having reached exit_mm() yet, after
	 * which no event would see the retire: the first of them writes it
	 * (its inherited events see it as the others' would). Another
	 * process sharing the mm (CLONE_VM) would see it early.
	 */
	if (atomic_read(&mm->mm_users) != 1 &&
	    !(tsk->signal->flags & SIGNAL_GROUP_EXIT))
		return;
	fm = READ_ONCE(mm->flowjit);
	if (!flowjit_fm_tracked(fm) || xchg(&fm->retired, true))
		return;
	flowjit_user_retire(fm, 0, TASK_SIZE_MAX);
}

/* The address space is gone (exit, exec): retire all of it. */
void flowjit_mm_exit(struct mm_struct *mm)
{
	struct flowjit_mm *fm = mm->flowjit;

	if (!fm)
		return;
	if (flowjit_fm_tracked(fm) && !fm->retired)
		flowjit_user_retire(fm, 0, TASK_SIZE_MAX);
	/* trackers still holding the mm read its state under the lock */
	mutex_lock(&flowjit_trackers_lock);
	WRITE_ONCE(mm->flowjit, NULL);
	if (atomic_read(&fm->users))
		atomic_dec(&flowjit_tracked_mms);
	mutex_unlock(&flowjit_trackers_lock);
	flowjit_seen_free(fm);	/* read by this mm's own faults only */
	/* an alias walk may still read fm->users: see struct flowjit_mm */
	kfree_rcu(fm, rcu);
}
