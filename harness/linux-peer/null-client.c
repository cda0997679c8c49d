/*
 * A minimal RPC-over-RDMA Version One NULL client (librdmacm + libibverbs): the reference the
 * harness's `bench-null` is measured against. It sends NFSv3 NULL calls as RDMA_MSG
 * (RFC 8166 4.2) with `depth` calls outstanding (never more than the responder's last credit
 * grant, RFC 8166 3.3.1), busy-polls its completion queues, signals every Send, and reposts a
 * receive per reply: the least a correct requester does.
 *
 *   null-client HOST [PORT] [--depth N]... [--calls N] [--warmup N]
 *
 * Prints, per depth, "null-calls depth=N: R calls/s (U us per call, C us of it our CPU)" like
 * `bench-null` (our CPU: /proc/self/schedstat's time on a CPU, read outside the timed loop).
 * Built in a chroot of the peer's root filesystem by harness/linux-peer/run (BENCH=1).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define RECEIVES 128    /* receives kept posted: more than any window we drive */
#define RECV_SIZE 4096  /* the RFC 8166 3.3.2 default inline threshold is 1024 */
#define SENDS 128       /* send slots, each reused only after its completion */
#define CALL_SIZE 68    /* 28-byte transport header + 40-byte RPC call header */
#define MAX_DEPTHS 8

static void die(const char *what)
{
	fprintf(stderr, "null-client: %s: %s\n", what, strerror(errno));
	exit(2);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Our process's time on a CPU so far in nanoseconds (/proc/self/schedstat); 0 if unknown. */
static unsigned long long cpu_ns(void)
{
	unsigned long long ns = 0;
	FILE *f = fopen("/proc/self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu", &ns) != 1)
			ns = 0;
		fclose(f);
	}
	return ns;
}

/* RDMA_MSG with empty read list, write list and reply chunk; an NFSv3 NULL call (RFC 5531). */
static void encode_call(uint32_t *w, uint32_t xid, uint32_t credits)
{
	uint32_t words[17] = { xid, 1, credits, 0, 0, 0, 0,
			       xid, 0, 2, 100003, 3, 0, 0, 0, 0, 0 };

	for (int i = 0; i < 17; i++)
		w[i] = htonl(words[i]);
}

struct client {
	struct rdma_cm_id *id;
	struct ibv_mr *recv_mr, *send_mr;
	uint8_t *recv_buf, *send_buf;
	uint32_t xid, grant;
	unsigned long sends_posted, sends_done;
};

static void post_recv(struct client *c, int slot)
{
	if (rdma_post_recv(c->id, (void *)(uintptr_t)slot, c->recv_buf + (size_t)slot * RECV_SIZE,
			   RECV_SIZE, c->recv_mr))
		die("rdma_post_recv");
}

/* Reaps send completions; returns how many replies arrived (reposting their receives). */
static int poll_once(struct client *c)
{
	struct ibv_wc wc[16];
	int n, replies = 0;

	n = ibv_poll_cq(c->id->send_cq, 16, wc);
	if (n < 0)
		die("ibv_poll_cq(send)");
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "null-client: send completion %s\n", ibv_wc_status_str(wc[i].status));
			exit(1);
		}
		c->sends_done++;
	}
	n = ibv_poll_cq(c->id->recv_cq, 16, wc);
	if (n < 0)
		die("ibv_poll_cq(recv)");
	for (int i = 0; i < n; i++) {
		int slot = (int)wc[i].wr_id;
		const uint32_t *w = (const uint32_t *)(c->recv_buf + (size_t)slot * RECV_SIZE);

		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "null-client: receive completion %s\n", ibv_wc_status_str(wc[i].status));
			exit(1);
		}
		if (wc[i].byte_len < 16 || ntohl(w[3]) != 0) {
			fprintf(stderr, "null-client: reply is not an RDMA_MSG (%u bytes)\n", wc[i].byte_len);
			exit(1);
		}
		c->grant = ntohl(w[2]);
		post_recv(c, slot);
		replies++;
	}
	return replies;
}

/* `total` calls with `depth` outstanding (bounded by the grant); seconds taken. */
static double drive(struct client *c, unsigned depth, unsigned long total)
{
	unsigned long sent = 0, done = 0;
	double t0 = now();

	while (done < total) {
		unsigned window = depth < c->grant ? depth : (c->grant ? c->grant : 1);

		while (sent < total && sent - done < window && c->sends_posted - c->sends_done < SENDS) {
			int slot = (int)(c->sends_posted % SENDS);
			uint8_t *buf = c->send_buf + (size_t)slot * CALL_SIZE;

			encode_call((uint32_t *)buf, ++c->xid, RECEIVES);
			if (rdma_post_send(c->id, NULL, buf, CALL_SIZE, c->send_mr, IBV_SEND_SIGNALED))
				die("rdma_post_send");
			c->sends_posted++;
			sent++;
		}
		done += poll_once(c);
	}
	return now() - t0;
}

int main(int argc, char **argv)
{
	const char *host = NULL, *port = "20049";
	unsigned depths[MAX_DEPTHS];
	int ndepths = 0;
	unsigned long calls = 2000, warmup = 200;
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = SENDS, .max_recv_wr = RECEIVES, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 0 },
		.qp_type = IBV_QPT_RC,
	};
	/* RFC 8797 private data: version 1, no remote invalidation, 4096-byte send and receive. */
	static const uint8_t private_data[8] = { 0xf6, 0xab, 0x0e, 0x18, 1, 0, 3, 3 };
	struct rdma_conn_param param = { .private_data = private_data, .private_data_len = 8,
					 .responder_resources = 1, .initiator_depth = 1,
					 .retry_count = 7, .rnr_retry_count = 7 };
	struct client c = { .grant = 1 };

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--depth") && i + 1 < argc && ndepths < MAX_DEPTHS)
			depths[ndepths++] = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
			warmup = strtoul(argv[++i], NULL, 10);
		else if (!host)
			host = argv[i];
		else
			port = argv[i];
	}
	if (!host) {
		fprintf(stderr, "usage: null-client HOST [PORT] [--depth N]... [--calls N] [--warmup N]\n");
		return 2;
	}
	if (!ndepths) {
		depths[ndepths++] = 1;
		depths[ndepths++] = 64;
	}
	for (int i = 0; i < ndepths; i++)
		if (depths[i] < 1 || depths[i] > RECEIVES) {
			fprintf(stderr, "null-client: --depth between 1 and %d\n", RECEIVES);
			return 2;
		}

	if (rdma_getaddrinfo(host, port, &hints, &res))
		die("rdma_getaddrinfo");
	if (rdma_create_ep(&c.id, res, NULL, &attr))
		die("rdma_create_ep");
	rdma_freeaddrinfo(res);
	c.recv_buf = calloc(RECEIVES, RECV_SIZE);
	c.send_buf = calloc(SENDS, CALL_SIZE);
	if (!c.recv_buf || !c.send_buf)
		die("calloc");
	if (!(c.recv_mr = rdma_reg_msgs(c.id, c.recv_buf, (size_t)RECEIVES * RECV_SIZE)))
		die("rdma_reg_msgs(receives)");
	if (!(c.send_mr = rdma_reg_msgs(c.id, c.send_buf, (size_t)SENDS * CALL_SIZE)))
		die("rdma_reg_msgs(sends)");
	for (int i = 0; i < RECEIVES; i++)
		post_recv(&c, i);
	if (rdma_connect(c.id, &param))
		die("rdma_connect");

	/* One call first: the requester has one credit until the first reply (RFC 8166 3.3.3). */
	drive(&c, 1, 1);
	printf("null-client %s:%s: responder grants %u credits\n", host, port, c.grant);
	for (int i = 0; i < ndepths; i++) {
		double secs;
		unsigned long long cpu0;

		drive(&c, depths[i], warmup);
		cpu0 = cpu_ns();
		secs = drive(&c, depths[i], calls);
		printf("null-calls depth=%u: %.0f calls/s (%.1f us per call, %.1f us of it our CPU)\n",
		       depths[i], calls / secs, secs * 1e6 / calls, (cpu_ns() - cpu0) / 1e3 / calls);
		fflush(stdout);
	}
	rdma_disconnect(c.id);
	rdma_dereg_mr(c.send_mr);
	rdma_dereg_mr(c.recv_mr);
	rdma_destroy_ep(c.id);
	return 0;
}
