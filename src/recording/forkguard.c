/* SPDX-License-Identifier: MIT */
/*
 * forkguard.c - which process owns libtlm's state (forkguard.h has the contract).
 *
 * fork() runs our atfork handlers; syscall(SYS_fork) and clone() do not, and
 * such a child would otherwise drain the parent's rings into the parent's
 * trace and wait at exit for a writer thread it does not have. The mark page
 * is wiped to zero in every child that does not share our memory, so one load
 * on the hot path finds such a child; a vfork child (shared memory) is told
 * by its pid and must touch nothing.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "recording/forkguard.h"

TLM_HOT volatile int *tlm__fork_mark;
pthread_t tlm__main_thread;
static _Atomic pid_t owner; /* the process this memory belongs to */

void tlm__forkguard_init(void)
{
	tlm__main_thread = pthread_self(); /* the constructor runs on the main thread */
	if (!atomic_load(&owner))
		atomic_store(&owner, getpid());
	if (tlm__fork_mark)
		return;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	if (madvise(p, 4096, MADV_WIPEONFORK) != 0) { /* before Linux 4.14: pids only */
		munmap(p, 4096);
		return;
	}
	*(volatile int *)p = 1;
	tlm__fork_mark = p;
}

void tlm__forkguard_arm(void)
{
	atomic_store(&owner, getpid());
	if (tlm__fork_mark)
		*tlm__fork_mark = 1;
}

bool tlm__forkguard_owner(void)
{
	volatile int *m = tlm__fork_mark;
	if (m && !*m)
		return false; /* a child that has not been reset yet: the state is its parent's */
	pid_t o = atomic_load(&owner);
	return !o || o == getpid();
}
