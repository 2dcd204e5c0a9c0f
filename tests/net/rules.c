/* SPDX-License-Identifier: Apache-2.0 */
/* Allowlist rules as the API will hand them over (suite 'unit': no privileges): what parses,
 * into what, and what is refused. Rules come from untrusted requests. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <string.h>

#include "allowlist.h"
#include "macro.h"

static struct allowlist_rule parse_ok(const char *proto, const char *cidr, const char *ports)
{
	struct allowlist_rule r;
	int e = allowlist_rule_parse(proto, cidr, ports, &r);

	cr_assert_eq(e, 0, "'%s' '%s' '%s': %s", proto, cidr, ports ? ports : "(null)",
		     strerror(-e));
	return r;
}

Test(rules, parses_cidrs_ports_and_protocols)
{
	struct allowlist_rule r;
	struct in6_addr want6;

	r = parse_ok("tcp", "198.18.0.0/15", "8000-8100");
	cr_assert_eq(r.family, AF_INET);
	cr_assert_eq(r.addr.in.s_addr, inet_addr("198.18.0.0"));
	cr_assert_eq(r.prefixlen, 15);
	cr_assert_eq(r.port_lo, 8000);
	cr_assert_eq(r.port_hi, 8100);
	cr_assert_eq(r.proto, ALLOWLIST_PROTO_TCP);

	r = parse_ok("udp", "198.18.0.1", "53");
	cr_assert_eq(r.prefixlen, 32, "a bare address is one host");
	cr_assert_eq(r.port_lo, 53);
	cr_assert_eq(r.port_hi, 53);

	r = parse_ok("icmp", "2001:db8::/32", NULL);
	cr_assert_eq(r.family, AF_INET6);
	inet_pton(AF_INET6, "2001:db8::", &want6);
	cr_assert_eq(memcmp(&r.addr.in6, &want6, sizeof(want6)), 0);
	cr_assert_eq(r.prefixlen, 32);
	cr_assert_eq(r.port_lo, 0);
	cr_assert_eq(r.port_hi, 65535);

	r = parse_ok("any", "::/0", "any");
	cr_assert_eq(r.prefixlen, 0);
	cr_assert_eq(r.proto, ALLOWLIST_PROTO_ANY);
	r = parse_ok(NULL, "0.0.0.0/0", "");
	cr_assert_eq(r.proto, ALLOWLIST_PROTO_ANY, "no protocol means any");
	cr_assert_eq(r.port_hi, 65535);
	r = parse_ok("tcp", "::1", "0-65535");
	cr_assert_eq(r.prefixlen, 128);
}

Test(rules, refuses_malformed_and_ambiguous_rules)
{
	static const char *const bad[][3] = {
		{ "sctp", "198.18.0.1", "80" },       /* unknown protocol */
		{ "TCP", "198.18.0.1", "80" },        /* names are lower case */
		{ "tcp", "198.18.0.1/15", "80" },     /* host bits set: a typo for /32 or .0/15? */
		{ "tcp", "198.18.0.0/33", "80" },
		{ "tcp", "2001:db8::/129", "80" },
		{ "tcp", "198.18.0.0/", "80" },
		{ "tcp", "198.18.0.0/-1", "80" },
		{ "tcp", "198.18.0.0/ 8", "80" },
		{ "tcp", "198.18.0.0/15x", "80" },
		{ "tcp", "198.18.0", "80" },
		{ "tcp", "example.com", "80" },
		{ "tcp", "", "80" },
		{ "tcp", "198.18.0.1", "65536" },
		{ "tcp", "198.18.0.1", "80-79" },     /* empty range */
		{ "tcp", "198.18.0.1", "-80" },
		{ "tcp", "198.18.0.1", "80-" },
		{ "tcp", "198.18.0.1", "+80" },
		{ "tcp", "198.18.0.1", "80,81" },
		{ "tcp", "198.18.0.1", "1234567-1" },
		{ "icmp", "198.18.0.1", "80" },       /* ICMP has no ports */
	};
	struct allowlist_rule r, untouched;

	memset(&untouched, 0x5a, sizeof(untouched));
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		r = untouched;
		cr_expect_eq(allowlist_rule_parse(bad[i][0], bad[i][1], bad[i][2], &r), -EINVAL,
			     "accepted '%s' '%s' '%s'", bad[i][0], bad[i][1], bad[i][2]);
		cr_expect_eq(memcmp(&r, &untouched, sizeof(r)), 0, "wrote *ret on failure");
	}
	cr_expect_eq(allowlist_rule_parse("tcp", NULL, "80", &r), -EINVAL);
}

Test(rules, string_tables_round_trip)
{
	for (int p = 0; p < _ALLOWLIST_PROTO_MAX; p++)
		cr_assert_eq(allowlist_proto_from_string(allowlist_proto_to_string(p)), p);
	cr_assert_null(allowlist_proto_to_string(_ALLOWLIST_PROTO_MAX));
	for (int h = 0; h < _ALLOWLIST_HOOK_MAX; h++)
		cr_assert_not_null(allowlist_hook_to_string(h));
	cr_assert_str_eq(allowlist_hook_to_string(ALLOWLIST_HOOK_EGRESS), "egress");
	cr_assert_null(allowlist_hook_to_string(_ALLOWLIST_HOOK_MAX));
	cr_assert_eq(sizeof(struct allowlist_event), 48, "the ring buffer record changed size");
}
