/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net.h"

/* A new network namespace holds only `lo`, and it starts down: programs that talk to
 * 127.0.0.1 (test servers, language servers) need it up. The classic ioctl needs no netlink
 * message building, so it stays async-signal-safe for the clone3 child. */
int net_loopback_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd, r = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		r = -errno;
		goto out;
	}
	if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			r = -errno;
	}
out:
	close(fd);
	return r;
}
