/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "macro.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3: executable even where vm.memfd_noexec says otherwise */
#endif

/* Every sandbox's init is exec'd from one sealed in-memory copy of warren-init, never from the
 * file on disk. A process inside a sandbox can reach its own binary through /proc/self/exe;
 * with a writable file there it could overwrite the host's binary and own the next sandbox
 * (runc, CVE-2019-5736). The seals make the copy immutable for everyone, forever. */
int container_init_memfd(const char *path)
{
	_cleanup_close_ int src = -EBADF, fd = -EBADF;
	struct stat st;

	src = open(path, O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return -errno;
	if (fstat(src, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;

	fd = memfd_create("warren-init", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (fd < 0 && errno == EINVAL) /* before 6.3 */
		fd = memfd_create("warren-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;

	for (off_t done = 0; done < st.st_size;) {
		ssize_t n = sendfile(fd, src, &done, st.st_size - done);

		if (n < 0)
			return -errno;
		if (n == 0) /* the file shrank under us */
			return -EIO;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return -errno;
	return TAKE_FD(fd);
}
