/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "wire.h"

size_t wire_strv_bytes(char *const *v, uint32_t *ret_n)
{
	size_t len = 0;
	uint32_t n = 0;

	for (; v && v[n]; n++)
		len += strlen(v[n]) + 1;
	*ret_n = n;
	return len;
}

char *wire_put_strv(char *at, char *const *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		at = stpcpy(at, v[i]) + 1;
	return at;
}

int wire_send(int sock, const void *buf, size_t len, const int *fds, unsigned n_fds, int flags)
{
	char control[CMSG_SPACE(sizeof(int) * WIRE_MAX_FDS)] = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	if (n_fds > WIRE_MAX_FDS)
		return -EINVAL;
	if (n_fds > 0) {
		struct cmsghdr *cm;

		mh.msg_control = control;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
	}
	do
		r = sendmsg(sock, &mh, MSG_NOSIGNAL | flags);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EIO;
}
