/*
 * tg-escape, network family: reach listeners outside the sandbox, open
 * socket families the sandbox forbids, bind ports, use rtnetlink as admin.
 * The harness runs these (sandboxed or not) inside a private network
 * namespace, so nothing can ever leave the machine.
 */
#include "tg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int parse_in(const char *addr, const char *port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	sa->sin_port = htons((unsigned short)atoi(port));
	return inet_pton(AF_INET, addr, &sa->sin_addr) == 1 ? 0 : -1;
}

static void set_rcvtimeo(int fd, int secs)
{
	struct timeval tv = { .tv_sec = secs, .tv_usec = 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

/* TCP connect to addr:port, expect the decoy marker. */
static int tcp_connect(const char *addr, const char *port)
{
	struct sockaddr_in sa;
	struct pollfd p;
	char buf[128];
	int fd, err = 0, fl;
	socklen_t len = sizeof err;
	ssize_t n;

	if (parse_in(addr, port, &sa) < 0)
		return tg_report(TG_UNKNOWN, "bad address %s", addr);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket(AF_INET, SOCK_STREAM): %s",
				 tg_errname(errno));
	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		if (errno != EINPROGRESS)
			return tg_report(TG_BLOCKED, "connect %s:%s: %s", addr,
					 port, tg_errname(errno));
		p.fd = fd;
		p.events = POLLOUT;
		if (poll(&p, 1, 3000) <= 0)
			return tg_report(TG_BLOCKED, "connect %s:%s: timed out",
					 addr, port);
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err)
			return tg_report(TG_BLOCKED, "connect %s:%s: %s", addr,
					 port, tg_errname(err));
	}
	fcntl(fd, F_SETFL, fl);
	set_rcvtimeo(fd, 3);
	n = read(fd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	if (n > 0 && strstr(buf, TG_DECOY_MARKER))
		return tg_report(TG_ESCAPED, "connect %s:%s: connected, got decoy marker",
				 addr, port);
	return tg_report(TG_ESCAPED, "connect %s:%s: connected (read %zd bytes, no marker)",
			 addr, port, n);
}

/* UDP datagram to addr:port, expect the decoy's reply. */
static int udp_send(const char *addr, const char *port)
{
	struct sockaddr_in sa;
	char buf[128];
	ssize_t n;
	int fd;

	if (parse_in(addr, port, &sa) < 0)
		return tg_report(TG_UNKNOWN, "bad address %s", addr);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket(AF_INET, SOCK_DGRAM): %s",
				 tg_errname(errno));
	set_rcvtimeo(fd, 2);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		return tg_report(TG_BLOCKED, "udp connect %s:%s: %s", addr, port,
				 tg_errname(errno));
	if (send(fd, "tgsec-ping", 10, 0) < 0)
		return tg_report(TG_BLOCKED, "udp send %s:%s: %s", addr, port,
				 tg_errname(errno));
	n = recv(fd, buf, sizeof buf - 1, 0);
	if (n < 0)
		return tg_report(TG_BLOCKED, "udp send %s:%s: sent, no reply (%s)",
				 addr, port, tg_errname(errno));
	buf[n] = '\0';
	close(fd);
	if (strstr(buf, TG_DECOY_MARKER))
		return tg_report(TG_ESCAPED, "udp %s:%s: decoy replied", addr, port);
	return tg_report(TG_ESCAPED, "udp %s:%s: got a %zd-byte reply from outside",
			 addr, port, n);
}

static int a_tcp_metadata(int argc, char **argv)
{
	return tcp_connect(tg_arg(argc, argv, 1, "169.254.169.254"),
			   tg_arg(argc, argv, 2, "80"));
}

static int a_tcp_private(int argc, char **argv)
{
	return tcp_connect(tg_arg(argc, argv, 1, "10.255.0.7"),
			   tg_arg(argc, argv, 2, "80"));
}

static int a_tcp_outer_loopback(int argc, char **argv)
{
	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: tcp_outer_loopback PORT");
	return tcp_connect("127.0.0.1", argv[1]);
}

static int a_udp_metadata(int argc, char **argv)
{
	return udp_send(tg_arg(argc, argv, 1, "169.254.169.254"),
			tg_arg(argc, argv, 2, "80"));
}

static int a_udp_private(int argc, char **argv)
{
	return udp_send(tg_arg(argc, argv, 1, "10.255.0.7"),
			tg_arg(argc, argv, 2, "80"));
}

static int a_udp_outer_loopback(int argc, char **argv)
{
	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: udp_outer_loopback PORT");
	return udp_send("127.0.0.1", argv[1]);
}

static unsigned short icmp_sum(const void *data, size_t len)
{
	const unsigned short *p = data;
	unsigned long s = 0;

	for (; len > 1; len -= 2)
		s += *p++;
	if (len)
		s += *(const unsigned char *)p;
	s = (s >> 16) + (s & 0xffff);
	s += s >> 16;
	return (unsigned short)~s;
}

static int a_raw_socket(int argc, char **argv)
{
	const char *addr = tg_arg(argc, argv, 1, "127.0.0.1");
	struct sockaddr_in sa;
	struct icmphdr h;
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);

	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket(AF_INET, SOCK_RAW, ICMP): %s",
				 tg_errname(errno));
	if (parse_in(addr, "0", &sa) < 0)
		return tg_report(TG_UNKNOWN, "bad address %s", addr);
	memset(&h, 0, sizeof h);
	h.type = ICMP_ECHO;
	h.un.echo.id = htons((unsigned short)getpid());
	h.checksum = icmp_sum(&h, sizeof h);
	if (sendto(fd, &h, sizeof h, 0, (struct sockaddr *)&sa, sizeof sa) < 0)
		return tg_report(TG_ESCAPED, "raw ICMP socket created (send to %s: %s)",
				 addr, tg_errname(errno));
	return tg_report(TG_ESCAPED, "raw ICMP socket created, echo sent to %s", addr);
}

static int a_packet_socket(int argc, char **argv)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));

	(void)argc;
	(void)argv;
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket(AF_PACKET, SOCK_RAW): %s",
				 tg_errname(errno));
	return tg_report(TG_ESCAPED, "AF_PACKET raw socket created (fd %d)", fd);
}

/* Dump unix sockets through sock_diag; returns the count or -1. */
static int diag_unix_count(int fd)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} req;
	char buf[16384];
	int count = 0;

	memset(&req, 0, sizeof req);
	req.nh.nlmsg_len = sizeof req;
	req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.r.sdiag_family = AF_UNIX;
	req.r.udiag_states = ~0u;
	req.r.udiag_show = UDIAG_SHOW_NAME;
	if (send(fd, &req, sizeof req, 0) < 0)
		return -1;
	set_rcvtimeo(fd, 2);
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof buf, 0);
		struct nlmsghdr *h;
		int len;

		if (n <= 0)
			return count;
		len = (int)n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				return count;
			count++;
		}
	}
}

static int netlink_family(int proto, const char *pname, unsigned groups)
{
	struct sockaddr_nl sa;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);

	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket(AF_NETLINK, %s): %s", pname,
				 tg_errname(errno));
	memset(&sa, 0, sizeof sa);
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = groups;
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		return tg_report(TG_ESCAPED, "socket(AF_NETLINK, %s) created (bind: %s)",
				 pname, tg_errname(errno));
	if (proto == NETLINK_SOCK_DIAG) {
		int c = diag_unix_count(fd);
		return tg_report(TG_ESCAPED, "socket(AF_NETLINK, %s) created, unix diag dump listed %d sockets",
				 pname, c);
	}
	return tg_report(TG_ESCAPED, "socket(AF_NETLINK, %s) created and bound",
			 pname);
}

static int a_netlink_audit(int argc, char **argv)
{
	(void)argc; (void)argv;
	return netlink_family(NETLINK_AUDIT, "NETLINK_AUDIT", 0);
}

static int a_netlink_uevent(int argc, char **argv)
{
	(void)argc; (void)argv;
	return netlink_family(NETLINK_KOBJECT_UEVENT, "NETLINK_KOBJECT_UEVENT", 1);
}

static int a_netlink_sock_diag(int argc, char **argv)
{
	(void)argc; (void)argv;
	return netlink_family(NETLINK_SOCK_DIAG, "NETLINK_SOCK_DIAG", 0);
}

static int a_netlink_generic(int argc, char **argv)
{
	(void)argc; (void)argv;
	return netlink_family(NETLINK_GENERIC, "NETLINK_GENERIC", 0);
}

static int a_netlink_netfilter(int argc, char **argv)
{
	(void)argc; (void)argv;
	return netlink_family(NETLINK_NETFILTER, "NETLINK_NETFILTER", 0);
}

static int a_netlink_xfrm(int argc, char **argv)
{
	(void)argc; (void)argv;
	return netlink_family(NETLINK_XFRM, "NETLINK_XFRM", 0);
}

static int a_netlink_connector(int argc, char **argv)
{
	(void)argc; (void)argv;
	return netlink_family(NETLINK_CONNECTOR, "NETLINK_CONNECTOR", 0);
}

/* Send an RTM_{NEW,DEL}ADDR for 10.254.254.254/32 on ifindex 1 (lo);
 * returns the kernel's ack error (0 = done) or -errno of the transport. */
static int rtnl_addr(int fd, unsigned short type)
{
	struct {
		struct nlmsghdr nh;
		struct ifaddrmsg ifa;
		char attrs[64];
	} req;
	struct rtattr *rta;
	struct in_addr a;
	char buf[4096];
	ssize_t n;

	inet_pton(AF_INET, "10.254.254.254", &a);
	memset(&req, 0, sizeof req);
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof req.ifa);
	req.nh.nlmsg_type = type;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK |
			     (type == RTM_NEWADDR ? NLM_F_CREATE | NLM_F_EXCL : 0);
	req.nh.nlmsg_seq = 1;
	req.ifa.ifa_family = AF_INET;
	req.ifa.ifa_prefixlen = 32;
	req.ifa.ifa_index = 1;
	for (int i = 0; i < 2; i++) {
		rta = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
		rta->rta_type = i == 0 ? IFA_LOCAL : IFA_ADDRESS;
		rta->rta_len = RTA_LENGTH(sizeof a);
		memcpy(RTA_DATA(rta), &a, sizeof a);
		req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
	}
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0)
		return -errno;
	set_rcvtimeo(fd, 2);
	n = recv(fd, buf, sizeof buf, 0);
	if (n < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)))
		return n < 0 ? -errno : -EIO;
	if (((struct nlmsghdr *)buf)->nlmsg_type != NLMSG_ERROR)
		return -EIO;
	return ((struct nlmsgerr *)NLMSG_DATA((struct nlmsghdr *)buf))->error;
}

static int a_netlink_route_admin(int argc, char **argv)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int e;

	(void)argc;
	(void)argv;
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket(AF_NETLINK, NETLINK_ROUTE): %s",
				 tg_errname(errno));
	e = rtnl_addr(fd, RTM_NEWADDR);
	if (e == 0) {
		rtnl_addr(fd, RTM_DELADDR);
		return tg_report(TG_ESCAPED, "RTM_NEWADDR 10.254.254.254/32 on lo accepted (network admin)");
	}
	return tg_report(TG_BLOCKED, "RTM_NEWADDR: %s", tg_errname(-e));
}

static int a_vsock(int argc, char **argv)
{
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);

	(void)argc;
	(void)argv;
	/* Creation only: a vsock connect would leave the machine. */
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket(AF_VSOCK): %s", tg_errname(errno));
	return tg_report(TG_ESCAPED, "AF_VSOCK socket created (fd %d)", fd);
}

static int a_tcp_bind(int argc, char **argv)
{
	struct sockaddr_in sa;
	int one = 1;
	int fd;

	if (parse_in("0.0.0.0", tg_arg(argc, argv, 1, "8080"), &sa) < 0)
		return tg_report(TG_UNKNOWN, "bad port");
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket: %s", tg_errname(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		return tg_report(TG_BLOCKED, "bind 0.0.0.0:%d: %s",
				 ntohs(sa.sin_port), tg_errname(errno));
	if (listen(fd, 4) < 0)
		return tg_report(TG_BLOCKED, "listen: %s", tg_errname(errno));
	return tg_report(TG_ESCAPED, "listening on 0.0.0.0:%d", ntohs(sa.sin_port));
}

static socklen_t abstract_addr(const char *name, struct sockaddr_un *su)
{
	size_t l = strlen(name);

	if (l > sizeof su->sun_path - 2)
		l = sizeof su->sun_path - 2;
	memset(su, 0, sizeof *su);
	su->sun_family = AF_UNIX;
	memcpy(su->sun_path + 1, name, l);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + l);
}

static int a_abstract_unix(int argc, char **argv)
{
	struct sockaddr_un su;
	socklen_t sl;
	char buf[128];
	ssize_t n;
	int fd;

	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: abstract_unix NAME");
	sl = abstract_addr(argv[1], &su);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket(AF_UNIX): %s", tg_errname(errno));
	if (connect(fd, (struct sockaddr *)&su, sl) < 0)
		return tg_report(TG_BLOCKED, "connect @%s: %s", argv[1],
				 tg_errname(errno));
	set_rcvtimeo(fd, 2);
	n = read(fd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	return tg_report(TG_ESCAPED, "connected to abstract socket @%s outside%s",
			 argv[1], strstr(buf, TG_DECOY_MARKER) ? ", got decoy marker" : "");
}

static int a_unix_path_socket(int argc, char **argv)
{
	struct sockaddr_un su;
	char buf[128];
	ssize_t n;
	int fd;

	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: unix_path_socket PATH");
	memset(&su, 0, sizeof su);
	su.sun_family = AF_UNIX;
	snprintf(su.sun_path, sizeof su.sun_path, "%s", argv[1]);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket(AF_UNIX): %s", tg_errname(errno));
	if (connect(fd, (struct sockaddr *)&su, sizeof su) < 0)
		return tg_report(TG_BLOCKED, "connect %s: %s", argv[1], tg_errname(errno));
	set_rcvtimeo(fd, 2);
	n = read(fd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	return tg_report(TG_ESCAPED, "connected to the outside unix socket %s%s", argv[1],
			 strstr(buf, TG_DECOY_MARKER) ? ", got decoy marker" : "");
}

/* Socket arguments are ints: the kernel drops the upper 32 bits of the
 * register, a seccomp filter comparing all 64 bits does not. */
static int a_socket_family_highbits(int argc, char **argv)
{
	long fd;

	(void)argc;
	(void)argv;
	fd = syscall(SYS_socket, (1UL << 32) | AF_PACKET, (unsigned long)SOCK_RAW,
		     (unsigned long)htons(ETH_P_ALL));
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket((1<<32)|AF_PACKET, SOCK_RAW): %s",
				 tg_errname(errno));
	return tg_report(TG_ESCAPED, "socket((1<<32)|AF_PACKET) made a packet socket (fd %ld)", fd);
}

static int a_netlink_proto_highbits(int argc, char **argv)
{
	long fd;

	(void)argc;
	(void)argv;
	fd = syscall(SYS_socket, (unsigned long)AF_NETLINK, (unsigned long)SOCK_RAW,
		     (1UL << 32) | NETLINK_AUDIT);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket(AF_NETLINK, SOCK_RAW, (1<<32)|NETLINK_AUDIT): %s",
				 tg_errname(errno));
	return tg_report(TG_ESCAPED, "socket(AF_NETLINK, (1<<32)|NETLINK_AUDIT) made an audit socket (fd %ld)", fd);
}

static int a_netlink_dgram(int argc, char **argv)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

	(void)argc;
	(void)argv;
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket(AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG): %s",
				 tg_errname(errno));
	return tg_report(TG_ESCAPED, "SOCK_DGRAM NETLINK_SOCK_DIAG socket created, unix diag dump listed %d sockets",
			 diag_unix_count(fd));
}

/* The kernel turns (AF_INET, SOCK_PACKET) into a packet socket. */
static int a_socket_inet_sock_packet(int argc, char **argv)
{
	int fd = socket(AF_INET, SOCK_PACKET, htons(ETH_P_ALL));

	(void)argc;
	(void)argv;
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket(AF_INET, SOCK_PACKET): %s", tg_errname(errno));
	return tg_report(TG_ESCAPED, "socket(AF_INET, SOCK_PACKET) made a packet socket (fd %d)", fd);
}

/* listen() on an unbound socket binds an ephemeral port without bind(),
 * which Landlock's TCP bind rule does not see. What would make that an
 * escape is someone reaching the listener: from outside it is another
 * network namespace, so the attempt connects to it from inside, which
 * Landlock's TCP connect rule must stop. */
static int a_tcp_listen_autobind(int argc, char **argv)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c;

	(void)argc;
	(void)argv;
	if (fd < 0)
		return tg_report(TG_BLOCKED, "socket: %s", tg_errname(errno));
	if (listen(fd, 4) < 0)
		return tg_report(TG_BLOCKED, "listen without bind: %s", tg_errname(errno));
	if (getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)
		return tg_report(TG_UNKNOWN, "getsockname: %s", tg_errname(errno));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0)
		return tg_report(TG_BLOCKED, "listening on port %d, but socket: %s",
				 ntohs(sa.sin_port), tg_errname(errno));
	if (connect(c, (struct sockaddr *)&sa, sizeof sa) < 0)
		return tg_report(TG_BLOCKED, "listening on port %d, but connect to it: %s",
				 ntohs(sa.sin_port), tg_errname(errno));
	return tg_report(TG_ESCAPED, "listen() without bind() on port %d, and reachable",
			 ntohs(sa.sin_port));
}

/* ---- helpers ---------------------------------------------------------- */

static void stamp(char *b, size_t n)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(b, n, "%lld.%03ld", (long long)ts.tv_sec, ts.tv_nsec / 1000000);
}

int tg_helper_listen(int argc, char **argv)
{
	struct sockaddr_in sa, peer;
	struct pollfd p[2];
	int one = 1;
	char ts[32];

	if (argc < 3 || parse_in(argv[1], argv[2], &sa) < 0) {
		fprintf(stderr, "usage: tg-escape listen ADDR PORT\n");
		return 2;
	}
	p[0].fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	p[1].fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (int i = 0; i < 2; i++) {
		setsockopt(p[i].fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(p[i].fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
			fprintf(stderr, "listen: bind %s:%s: %s\n", argv[1], argv[2],
				strerror(errno));
			return 2;
		}
		p[i].events = POLLIN;
	}
	listen(p[0].fd, 16);
	printf("READY %s:%s\n", argv[1], argv[2]);
	fflush(stdout);
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 2;
		}
		if (p[0].revents & POLLIN) {
			socklen_t pl = sizeof peer;
			int c = accept(p[0].fd, (struct sockaddr *)&peer, &pl);
			if (c >= 0) {
				stamp(ts, sizeof ts);
				printf("HIT tcp %s from %s\n", ts, inet_ntoa(peer.sin_addr));
				fflush(stdout);
				if (write(c, TG_DECOY_MARKER "\n", sizeof TG_DECOY_MARKER) < 0)
					perror("listen: write");
				close(c);
			}
		}
		if (p[1].revents & POLLIN) {
			char buf[512];
			socklen_t pl = sizeof peer;
			ssize_t n = recvfrom(p[1].fd, buf, sizeof buf, 0,
					     (struct sockaddr *)&peer, &pl);
			if (n >= 0) {
				stamp(ts, sizeof ts);
				printf("HIT udp %s from %s\n", ts, inet_ntoa(peer.sin_addr));
				fflush(stdout);
				sendto(p[1].fd, TG_DECOY_MARKER "\n", sizeof TG_DECOY_MARKER,
				       0, (struct sockaddr *)&peer, pl);
			}
		}
	}
}

int tg_helper_listen_unix(int argc, char **argv)
{
	struct sockaddr_un su;
	socklen_t sl;
	int fd;
	char ts[32];

	if (argc < 2) {
		fprintf(stderr, "usage: tg-escape listen-unix NAME\n");
		return 2;
	}
	sl = abstract_addr(argv[1], &su);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&su, sl) < 0 || listen(fd, 16) < 0) {
		fprintf(stderr, "listen-unix @%s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	printf("READY @%s\n", argv[1]);
	fflush(stdout);
	for (;;) {
		int c = accept(fd, NULL, NULL);
		if (c < 0)
			continue;
		stamp(ts, sizeof ts);
		printf("HIT unix %s\n", ts);
		fflush(stdout);
		if (write(c, TG_DECOY_MARKER "\n", sizeof TG_DECOY_MARKER) < 0)
			perror("listen-unix: write");
		close(c);
	}
}

int tg_helper_listen_path(int argc, char **argv)
{
	struct sockaddr_un su;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: tg-escape listen-path PATH\n");
		return 2;
	}
	memset(&su, 0, sizeof su);
	su.sun_family = AF_UNIX;
	snprintf(su.sun_path, sizeof su.sun_path, "%s", argv[1]);
	unlink(argv[1]);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&su, sizeof su) < 0 || listen(fd, 16) < 0) {
		fprintf(stderr, "listen-path %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	chmod(argv[1], 0777);
	printf("READY %s\n", argv[1]);
	fflush(stdout);
	for (;;) {
		char ts[32];
		int c = accept(fd, NULL, NULL);
		if (c < 0)
			continue;
		stamp(ts, sizeof ts);
		printf("HIT unix-path %s\n", ts);
		fflush(stdout);
		if (write(c, TG_DECOY_MARKER "\n", sizeof TG_DECOY_MARKER) < 0)
			perror("listen-path: write");
		close(c);
	}
}

const struct tg_attempt tg_net_attempts[] = {
	{ "tcp_metadata", "network", a_tcp_metadata, "[ADDR PORT]  TCP to 169.254.169.254:80 decoy" },
	{ "tcp_private", "network", a_tcp_private, "[ADDR PORT]  TCP to 10.255.0.7:80 decoy" },
	{ "tcp_outer_loopback", "network", a_tcp_outer_loopback, "PORT  TCP to 127.0.0.1:PORT of the outer namespace" },
	{ "udp_metadata", "network", a_udp_metadata, "[ADDR PORT]  UDP to 169.254.169.254:80 decoy" },
	{ "udp_private", "network", a_udp_private, "[ADDR PORT]  UDP to 10.255.0.7:80 decoy" },
	{ "udp_outer_loopback", "network", a_udp_outer_loopback, "PORT  UDP to 127.0.0.1:PORT outside" },
	{ "raw_socket", "network", a_raw_socket, "[ADDR]  AF_INET SOCK_RAW ICMP socket" },
	{ "packet_socket", "network", a_packet_socket, "AF_PACKET raw socket" },
	{ "netlink_audit", "network", a_netlink_audit, "NETLINK_AUDIT socket" },
	{ "netlink_uevent", "network", a_netlink_uevent, "NETLINK_KOBJECT_UEVENT socket" },
	{ "netlink_sock_diag", "network", a_netlink_sock_diag, "NETLINK_SOCK_DIAG socket + unix dump" },
	{ "netlink_generic", "network", a_netlink_generic, "NETLINK_GENERIC socket" },
	{ "netlink_netfilter", "network", a_netlink_netfilter, "NETLINK_NETFILTER socket" },
	{ "netlink_xfrm", "network", a_netlink_xfrm, "NETLINK_XFRM socket" },
	{ "netlink_connector", "network", a_netlink_connector, "NETLINK_CONNECTOR socket" },
	{ "netlink_route_admin", "network", a_netlink_route_admin, "add an address to lo via rtnetlink" },
	{ "vsock", "network", a_vsock, "AF_VSOCK socket (created only)" },
	{ "tcp_bind", "network", a_tcp_bind, "[PORT]  bind+listen a TCP port" },
	{ "abstract_unix", "network", a_abstract_unix, "NAME  connect to an abstract unix socket outside" },
	{ "unix_path_socket", "network", a_unix_path_socket, "PATH  connect to an outside unix socket in a --ro bind" },
	{ "socket_family_highbits", "network", a_socket_family_highbits, "AF_PACKET with the upper 32 bits set" },
	{ "netlink_proto_highbits", "network", a_netlink_proto_highbits, "NETLINK_AUDIT with the upper 32 bits set" },
	{ "netlink_dgram", "network", a_netlink_dgram, "SOCK_DGRAM NETLINK_SOCK_DIAG socket" },
	{ "socket_inet_sock_packet", "network", a_socket_inet_sock_packet, "obsolete (AF_INET, SOCK_PACKET) packet socket" },
	{ "tcp_listen_autobind", "network", a_tcp_listen_autobind, "listen() without bind(), then connect to it" },
	{ NULL, NULL, NULL, NULL },
};
