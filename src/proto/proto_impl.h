/* Private to src/proto/: the session table and output queue (session.c) that the protocol
 * files (isotp.c, j1939.c, fast.c) share, and their entry points for proto.c. */
#ifndef SF_PROTO_IMPL_H
#define SF_PROTO_IMPL_H

#include "streamfat/proto.h"

enum { SESS_FREE = 0, SESS_OPEN = 1, SESS_DONE = 2 };

/* The open session of (proto, channel, id, addr), or NULL. `id` and `addr` are whatever
 * key the protocol file uses (ISO-TP: the data id and address byte; J1939: sa << 8 | da;
 * fast packet: the PGN and sa). */
struct sf_proto_session *sf_proto_find(struct sf_proto *p, uint8_t proto, uint8_t channel,
                                       uint32_t id, uint8_t addr);
/* A new open session with `declared` bytes of arena, its deadline `timeout` ns after ts;
 * NULL (counted in no_session or no_memory) when there is no slot or no room. */
struct sf_proto_session *sf_proto_open(struct sf_proto *p, uint8_t proto, uint8_t channel,
                                       uint32_t id, uint8_t addr, uint32_t declared,
                                       uint64_t ts, uint64_t timeout);
/* Append n bytes (the caller has checked they fit) and note the frame. */
void sf_proto_append(struct sf_proto *p, struct sf_proto_session *s, const uint8_t *d,
                     uint32_t n, uint64_t ts);
/* A frame carrying packet `number` of session s (J1939 TP.DT / ETP.DT: byte 0; a fast
 * packet's frame counter), its data the up to 7 bytes after byte 0. The number must be
 * s->seq, the next expected, and in_window true (ETP: a DPO has placed the window), else
 * the session ends SF_MSG_BAD_SEQ: TAKE_DUP when the frame repeats the previous packet
 * (its number and its bytes), TAKE_WRONG otherwise. A frame too short for what the message still needs ends it
 * SF_MSG_BAD_LENGTH: TAKE_SHORT. Else the bytes are appended and s->seq advanced:
 * TAKE_DONE when that completed the message (closed SF_MSG_OK), TAKE_MORE when more are
 * to come (the caller arms its timer). The caller counts the outcome. */
enum sf_take { TAKE_MORE, TAKE_DONE, TAKE_DUP, TAKE_WRONG, TAKE_SHORT };
enum sf_take sf_proto_take_packet(struct sf_proto *p, struct sf_proto_session *s,
                                  const struct sf_proto_frame *f, uint8_t number,
                                  int in_window);
/* Move the deadline of an open session. */
void sf_proto_arm(struct sf_proto *p, struct sf_proto_session *s, uint64_t deadline);
/* End a session with `status` and queue it for sf_proto_next. */
void sf_proto_close(struct sf_proto *p, struct sf_proto_session *s, uint8_t status);
/* Queue a message that needs no session (an ISO-TP single frame, an FF event); slot 0 or
 * 1 of p->extra. */
void sf_proto_queue_extra(struct sf_proto *p, int slot);
/* The message of a session, for sf_proto_next. */
void sf_proto_fill(const struct sf_proto *p, const struct sf_proto_session *s,
                   struct sf_proto_msg *m);

/* Per protocol: 1 if the frame was its, else 0. */
int sf_isotp_frame(struct sf_proto *p, const struct sf_proto_frame *f);
int sf_j1939_frame(struct sf_proto *p, const struct sf_proto_frame *f);
int sf_fast_frame(struct sf_proto *p, const struct sf_proto_frame *f);

#endif
