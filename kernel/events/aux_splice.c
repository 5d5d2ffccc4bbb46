// SPDX-License-Identifier: GPL-2.0-only
/*
 * splice() of perf AUX data: the pages between aux_tail and aux_head go
 * into a pipe by reference, and aux_tail moves only when the pipe has
 * released them, so that the PMU never overwrites data still in flight.
 *
 * The first splice() of an AUX buffer claims it: from then until the AUX
 * area is unmapped, the kernel owns aux_tail. A write of aux_tail by user
 * space after the claim is found at the next splice(), which fails with
 * EBUSY. Overwrite (snapshot) mode has no tail to hold back and is refused
 * with EOPNOTSUPP; an event without an AUX area gets ENODATA.
 *
 * See Documentation/trace/aux-splice.rst.
 */

#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/pipe_fs_i.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/splice.h>
#include <linux/wait.h>

#include "internal.h"

/* one per AUX buffer that splice() has claimed */
struct aux_splice {
	spinlock_t lock;		/* next three and ref users */
	refcount_t ref;			/* rb, pipe buffers */
	struct perf_buffer *rb;		/* NULL once the AUX area is gone */
	unsigned long next;		/* next AUX byte to go into a pipe */
	unsigned long tail;		/* the aux_tail this code last wrote */
	struct list_head inflight;	/* aux_splice_ref, in AUX order */
};

/* a range of AUX bytes in a pipe buffer (and its tee() copies) */
struct aux_splice_ref {
	struct list_head node;
	struct aux_splice *as;
	unsigned long end;
	unsigned int users;
	bool queued;
};

static void aux_splice_put(struct aux_splice *as)
{
	if (refcount_dec_and_test(&as->ref))
		kfree(as);
}

/* called with as->lock held */
static void aux_splice_advance(struct aux_splice *as)
{
	struct aux_splice_ref *r, *tmp;
	bool moved = false;

	list_for_each_entry_safe(r, tmp, &as->inflight, node) {
		if (r->users)
			break;
		as->tail = r->end;
		list_del(&r->node);
		kfree(r);
		moved = true;
	}
	if (moved && as->rb) {
		/* the consumer is done with the bytes: (D) of ring_buffer.c */
		smp_mb();
		WRITE_ONCE(as->rb->user_page->aux_tail, as->tail);
	}
}

static void aux_splice_buf_release(struct pipe_inode_info *pipe,
				   struct pipe_buffer *buf)
{
	struct aux_splice_ref *r = (struct aux_splice_ref *)buf->private;
	struct aux_splice *as = r->as;

	put_page(buf->page);
	spin_lock(&as->lock);
	if (!r->queued) {
		/* never made it into the pipe */
		kfree(r);
	} else if (!--r->users) {
		aux_splice_advance(as);
	}
	spin_unlock(&as->lock);
	aux_splice_put(as);
}

static bool aux_splice_buf_get(struct pipe_inode_info *pipe,
			       struct pipe_buffer *buf)
{
	struct aux_splice_ref *r = (struct aux_splice_ref *)buf->private;
	struct aux_splice *as = r->as;

	if (!try_get_page(buf->page))
		return false;
	spin_lock(&as->lock);
	r->users++;
	spin_unlock(&as->lock);
	refcount_inc(&as->ref);
	return true;
}

static const struct pipe_buf_operations aux_splice_buf_ops = {
	.release	= aux_splice_buf_release,
	.get		= aux_splice_buf_get,
};

/* with rb->aux_mutex held: the AUX area goes away under that mutex only */
static struct aux_splice *aux_splice_claim(struct perf_buffer *rb)
{
	struct aux_splice *as = rb->aux_splice;

	if (as)
		return as;
	as = kzalloc(sizeof(*as), GFP_KERNEL);
	if (!as)
		return NULL;
	spin_lock_init(&as->lock);
	refcount_set(&as->ref, 1);
	INIT_LIST_HEAD(&as->inflight);
	as->rb = rb;
	/* what an mmap reader consumed before the claim stays consumed */
	as->tail = READ_ONCE(rb->user_page->aux_tail);
	as->next = as->tail;
	rb->aux_splice = as;
	return as;
}

/* from __rb_free_aux(): pipe buffers may outlive the AUX area */
void perf_aux_splice_detach(struct perf_buffer *rb)
{
	struct aux_splice *as = rb->aux_splice;

	if (!as)
		return;
	rb->aux_splice = NULL;
	spin_lock(&as->lock);
	as->rb = NULL;
	spin_unlock(&as->lock);
	aux_splice_put(as);
}

/*
 * Move up to @len bytes from @as->next into @pipe; rb->aux_mutex and the
 * pipe lock held. Bytes moved, -EAGAIN if the pipe was full before any
 * (as splice_to_pipe()), 0 if there is nothing to move, or an error.
 */
static ssize_t aux_splice_fill(struct perf_buffer *rb, struct aux_splice *as,
			       struct pipe_inode_info *pipe, size_t len,
			       unsigned long head)
{
	unsigned long mask = ((unsigned long)rb->aux_nr_pages << PAGE_SHIFT) - 1;
	ssize_t done = 0;

	while (len && as->next != head) {
		unsigned long off = as->next & mask;
		unsigned int in_page = off & ~PAGE_MASK;
		size_t chunk = min_t(size_t, PAGE_SIZE - in_page, len);
		struct aux_splice_ref *r;
		struct pipe_buffer buf;
		ssize_t ret;

		chunk = min_t(size_t, chunk, head - as->next);
		if (!pipe->readers) {
			send_sig(SIGPIPE, current, 0);
			return done ? done : -EPIPE;
		}
		if (pipe_full(pipe->head, pipe->tail, pipe->max_usage))
			return done ? done : -EAGAIN;
		r = kmalloc(sizeof(*r), GFP_KERNEL);
		if (!r)
			return done ? done : -ENOMEM;
		r->as = as;
		r->end = as->next + chunk;
		r->users = 1;
		r->queued = false;
		buf = (struct pipe_buffer) {
			.page = virt_to_page(rb->aux_pages[off >> PAGE_SHIFT]),
			.offset = in_page,
			.len = chunk,
			.ops = &aux_splice_buf_ops,
			.private = (unsigned long)r,
		};
		get_page(buf.page);
		refcount_inc(&as->ref);
		ret = add_to_pipe(pipe, &buf);
		if (ret < 0)
			return done ? done : ret;
		spin_lock(&as->lock);
		r->queued = true;
		list_add_tail(&r->node, &as->inflight);
		spin_unlock(&as->lock);
		as->next += chunk;
		done += chunk;
		len -= chunk;
	}
	return done;
}

/*
 * Where the PMU has written up to: the kernel's copy, not the user page's,
 * which user space can write. Pairs with the PMU's barrier before it
 * publishes aux_head ((B) in kernel/events/ring_buffer.c).
 */
static unsigned long aux_splice_head(struct perf_buffer *rb)
{
	return READ_ONCE(rb->aux_head);
}

/*
 * One attempt: bytes moved, 0 when there is nothing to splice, -EAGAIN
 * when the pipe is full, or an error. *pos is where the data moved so
 * far ends, for the caller's wait.
 */
static ssize_t aux_splice_once(struct perf_event *event,
			       struct pipe_inode_info *pipe, size_t len,
			       unsigned long *pos)
{
	struct perf_buffer *rb = ring_buffer_get(event);
	struct aux_splice *as;
	unsigned long head;
	ssize_t ret;

	if (!rb)
		return -ENODATA;
	mutex_lock(&rb->aux_mutex);
	ret = -ENODATA;
	if (!rb_has_aux(rb) || !atomic_read(&rb->aux_mmap_count))
		goto unlock;
	ret = -EOPNOTSUPP;
	if (rb->aux_overwrite)
		goto unlock;
	ret = -ENOMEM;
	as = aux_splice_claim(rb);
	if (!as)
		goto unlock;
	ret = -EBUSY;
	if (READ_ONCE(rb->user_page->aux_tail) != as->tail)
		goto unlock;
	head = aux_splice_head(rb);
	/* the data the PMU wrote before it published aux_head: (C) */
	smp_rmb();
	ret = aux_splice_fill(rb, as, pipe, len, head);
	*pos = as->next;
unlock:
	mutex_unlock(&rb->aux_mutex);
	ring_buffer_put(rb);
	return ret;
}

static bool aux_splice_ready(struct perf_event *event, unsigned long pos)
{
	struct perf_buffer *rb;
	bool ready = true;

	rcu_read_lock();
	/* event->rb is RCU-managed but not annotated __rcu in 6.1 */
	rb = rcu_dereference_raw(event->rb);
	if (rb && rb_has_aux(rb) && atomic_read(&rb->aux_mmap_count))
		ready = aux_splice_head(rb) != pos;
	rcu_read_unlock();
	return ready;
}

/*
 * file_operations::splice_read of perf event fds. Blocks (unless
 * SPLICE_F_NONBLOCK or O_NONBLOCK) until AUX data is there and the pipe
 * has room for it; PMUs wake readers at the AUX watermark
 * (perf_event_attr::aux_watermark). Signals end the wait.
 *
 * The caller holds the pipe lock: the only caller is
 * splice_file_to_pipe() (splice(2), sendfile(2) to a pipe); the
 * internal pipe of splice_direct_to_actor() cannot be filled from a
 * perf fd, which is not seekable (no FMODE_LSEEK). Like
 * pipe_wait_readable() and pipe_wait_writable(), the wait drops that
 * lock while it sleeps, so that the pipe's reader can release buffers,
 * and with them AUX space, meanwhile.
 */
ssize_t perf_aux_splice_read(struct file *file, loff_t *ppos,
			     struct pipe_inode_info *pipe, size_t len,
			     unsigned int flags)
{
	struct perf_event *event = file->private_data;
	bool nonblock = (flags & SPLICE_F_NONBLOCK) ||
			(file->f_flags & O_NONBLOCK);
	unsigned long pos = 0;
	ssize_t ret;

	lockdep_assert_held(&pipe->mutex);
	if (!len)
		return 0;
	for (;;) {
		ret = aux_splice_once(event, pipe, len, &pos);
		if (ret > 0 || (ret < 0 && ret != -EAGAIN))
			return ret;
		if (nonblock)
			return -EAGAIN;
		/*
		 * Nothing moved, and the wait may find its condition true
		 * at once (data came, the pipe has space again): check for
		 * signals here, or a task that never makes progress
		 * would never notice one.
		 */
		if (signal_pending(current))
			return -ERESTARTSYS;
		if (unlikely(!pipe->readers)) {
			send_sig(SIGPIPE, current, 0);
			return -EPIPE;
		}
		if (ret == -EAGAIN) {
			/*
			 * Another writer filled the pipe while this waited
			 * for data: wait for space as wait_for_space() in
			 * fs/splice.c does.
			 */
			pipe_wait_writable(pipe);
			continue;
		}
		pipe_unlock(pipe);
		wait_event_interruptible(event->waitq,
					 aux_splice_ready(event, pos));
		pipe_lock(pipe);
	}
}
