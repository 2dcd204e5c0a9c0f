/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <jansson.h>

struct daemon;
struct loop;

/* The kernel's audit records of refusals (seccomp, Landlock, AppArmor) into the denial journal.
 * Opened on the main thread at start-up: the audit netlink multicast group, else /dev/kmsg.
 * Landlock logs only while the kernel's audit is on, so warrend turns it on if it is off (with
 * backlog_wait_time 0, so that a full backlog never puts a process to sleep, and a rate
 * limit), and turns it off again when it stops. */
void audit_feed_open(struct daemon *d);
void audit_feed_close(struct daemon *d);
json_t *audit_feed_info(const struct daemon *d);
/* Loop 0 reads the records. */
void audit_feed_start(struct loop *l);
