// SPDX-License-Identifier: GPL-2.0
/* System calls: user-only tracing stops at SYSCALL, resumes after. */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>

int main(void)
{
	char buf[16];
	int i, fd;

	for (i = 0; i < 20; i++) {
		if (i & 1)
			syscall(SYS_getpid);
		else
			getppid();
	}
	fd = open("/dev/zero", O_RDONLY);
	if (fd >= 0) {
		for (i = 0; i < 5; i++)
			if (read(fd, buf, sizeof(buf)) != sizeof(buf))
				break;
		close(fd);
	}
	return 0;
}
