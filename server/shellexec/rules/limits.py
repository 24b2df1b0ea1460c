"""Every size, count, length and page cap of the public contract, in one place.

This module mirrors the "Limits" table of docs/api.md row by row (tests/docs/test_limits_table.py
holds the two together). It is a leaf: it imports nothing from shellexec, so the pure fold
(`shellexec.normalize`), the request validation (`shellexec.api.validation`), the use cases,
the front door's configuration and the bridge can all read it.
"""

from __future__ import annotations

from typing import Final

_MIB: Final = 1024 * 1024

# One ACP update, as its protobuf encoding (a google.protobuf.Value).
MAX_UPDATE_BYTES: Final = 4 * _MIB

# A Normalize request folds one tool call's updates.
MIN_NORMALIZE_UPDATES: Final = 1
MAX_NORMALIZE_UPDATES: Final = 1000
# Its updates together, as their protobuf encodings: the work one request may ask for.
MAX_NORMALIZE_BYTES: Final = 8 * _MIB

# The JSON values (objects, arrays, strings, numbers, booleans, nulls) of one Normalize
# request's updates together, or of one published update; and how deep an update nests
# objects and arrays (the update object itself is level 1). Converting values is what costs
# CPU, so these bound the work of one request (ADR 0045).
MAX_REQUEST_VALUES: Final = 100_000
MAX_UPDATE_DEPTH: Final = 32

# Envoy refuses a larger REST body with 413; the gRPC server and clients refuse a larger
# message. A gRPC message is larger than a REST body so that a full page always fits.
MAX_REST_BODY_BYTES: Final = 8 * _MIB
MAX_GRPC_MESSAGE_BYTES: Final = 16 * _MIB

# Each output stream (stdout, stderr) keeps its newest bytes of UTF-8.
MAX_OUTPUT_STREAM_BYTES: Final = 262_144
# Summarize takes an output as the service holds one, so the same bound applies.
MAX_SUMMARIZE_FIELD_BYTES: Final = MAX_OUTPUT_STREAM_BYTES

# ListMessages and ListSessions: `limit` 0 means the default; larger values are cut to the
# maximum.
DEFAULT_PAGE_SIZE: Final = 100
MAX_PAGE_SIZE: Final = 500
BOOT_STATE_MESSAGES: Final = 500

# The characters of a task id and a request id, as a regular-expression class.
ID_CHARACTERS: Final = "A-Za-z0-9_.:-"
MIN_TASK_ID_CHARS: Final = 1
MAX_TASK_ID_CHARS: Final = 128

MAX_AGENT_CHARS: Final = 64
MAX_STOP_REASON_CHARS: Final = 64
MAX_TOOL_CALL_ID_CHARS: Final = 256
MIN_SEQUENCE: Final = 1

# Identifiers the server assigns: `ses_`, `turn_` or `msg_` and this many lowercase hex digits.
# Any other value cannot name anything, so it is NOT_FOUND like an unknown id.
SERVER_ID_HEX_DIGITS: Final = 32

MIN_REQUEST_ID_CHARS: Final = 1
MAX_REQUEST_ID_CHARS: Final = 64
# Far longer than any client retries one call, short enough that the table stays small.
REQUEST_ID_WINDOW_SECONDS: Final = 24 * 60 * 60

# A stored command, title, work dir or chat text keeps its beginning, bounded like an output
# stream so that a page's weight stays predictable.
MAX_STORED_TEXT_BYTES: Final = MAX_OUTPUT_STREAM_BYTES

# A list or boot-state page stops growing past about this much text (well under a gRPC
# message); the client then sees `has_more` and asks for the next page.
MAX_PAGE_BYTES: Final = 4 * _MIB

# An error message quotes at most this many characters of any input, then "…".
MAX_QUOTED_INPUT_CHARS: Final = 64
# Whatever an error says is cut to this many characters, so that the status the server sends
# (a gRPC trailer, an HTTP header through Envoy) stays far below Envoy's 60 KiB and gRPC's
# 8 KiB header limits: an oversized one would make Envoy reset the shared upstream connection.
MAX_ERROR_MESSAGE_CHARS: Final = 1024

# WatchMessages' `since_revision` is at least this, and at most the session's revision.
MIN_SINCE_REVISION: Final = 0

# The longest bearer token the service looks at: longer is UNAUTHENTICATED without hashing it.
# Tokens it issues are 47 characters; names of tokens follow the task-id alphabet.
# A request's headers through the front door, in all (Envoy answers 431 past it); the token
# check reads each check's head within a bound above it (ADR 0119).
MAX_REQUEST_HEADERS_BYTES: Final = 60 * 1024
# A request's header fields through the front door, not counting Host (HTTP/1), HTTP/2's
# pseudo-headers (`:path`...), nor one `x-request-id` and one `x-forwarded-proto` (Envoy adds
# each when the client sent none): one more is answered 431 (gRPC: RESOURCE_EXHAUSTED) saying
# so. Envoy reads several times as many (`app.envoy.HEADER_FIELDS_READ`), so nothing it adds
# to a request it accepted (the request id, the token check's ticket) takes it past a limit
# of its own: under its default of 100, a request of 95 fields failed 500.
MAX_REQUEST_HEADER_FIELDS: Final = 64
# A health request through the front door, which is open without a token: a service name is
# short, and a larger body is refused (413) instead of held (ADR 0119).
MAX_HEALTH_REQUEST_BYTES: Final = 1024

MAX_BEARER_TOKEN_CHARS: Final = 256
MAX_TOKEN_NAME_CHARS: Final = 64
# A watcher's queue of live events, in events and in the bytes their messages weigh
# (`projection.event_weight`); past either the watcher is lagged, the queue is emptied, and
# the watcher replays from the durable log (ADR 0046, ADR 0133).
FEED_QUEUE_EVENTS: Final = 1024
FEED_QUEUE_BYTES: Final = 2 * _MIB
# One read of the durable log during a replay, in events and in the bytes their messages
# weigh (each message once): what a watcher stalled mid-replay holds (ADR 0133).
REPLAY_BATCH_EVENTS: Final = 100
REPLAY_BATCH_BYTES: Final = 1 * _MIB
# The feed watchers one caller (a token's name; with authentication off, everyone) may hold
# open at once on one replica: each may hold a live queue and a replay batch (above), so this
# bounds what one caller can make the server hold. A dashboard watching every session of a
# busy task stays far below it (ADR 0135).
MAX_WATCHERS_PER_CALLER: Final = 64
# The streams one client connection may carry at once through the front door (HTTP/2's
# SETTINGS_MAX_CONCURRENT_STREAMS, which Envoy announces; a client waits for a free one): a
# caller's full share of watchers with room for its unary calls beside them (ADR 0135).
FRONT_DOOR_STREAMS_PER_CONNECTION: Final = 256
# The streams the front door carries to the servers at once in each of its pools (unary calls,
# feeds, health checks, health watches with reflection), per replica: Envoy's circuit breaker,
# past which it answers 503. Each pool has its own, so streams held in one never refuse a
# call of another (ADR 0139).
FRONT_DOOR_POOL_STREAMS_PER_REPLICA: Final = 1024
# The calls one server runs at once, of every kind: what the front door's four pools may
# carry to it, and as many again for clients of its own gRPC port. One more is refused with
# RESOURCE_EXHAUSTED at once. The port bounded neither: each waiting call holds its headers
# and a stream's window, and 20,000 of them grew a server by 380 MB (ADR 0140).
MAX_SERVER_CALLS: Final = 5 * FRONT_DOOR_POOL_STREAMS_PER_REPLICA
# The connections the server's own gRPC port holds at once, the front door's and its direct
# clients' together: one more is closed as it is accepted (its client hears UNAVAILABLE). Each
# costs gRPC's core 14-17 KB while open, and the allocator keeps most of it once closed: 19,900
# held at once (the process's file descriptors were the only bound) grew a server from 61 MB
# to 400-470 MB, all of it still resident after they closed. The front door needs a handful.
MAX_GRPC_CONNECTIONS: Final = FRONT_DOOR_POOL_STREAMS_PER_REPLICA
# A connection must finish HTTP/2's preface and settings within this long (gRPC's default is
# two minutes), and one that has made no call is sent GOAWAY after this long, so connections
# that never call do not keep their place under MAX_GRPC_CONNECTIONS. (gRPC's idle timer
# closed no connection that had made a call, in a review: those stay until their client
# closes them.)
GRPC_HANDSHAKE_SECONDS: Final = 10
GRPC_CONNECTION_IDLE_SECONDS: Final = 60
# The bytes of requests the server holds at once, in all and of one caller (a token's name;
# with authentication off, everyone). A call reserves MAX_GRPC_MESSAGE_BYTES before its
# message is read, holds the message's size once it has arrived, and waits while its
# reservation does not fit (ADR 0140).
REQUEST_BUDGET_BYTES: Final = 8 * MAX_GRPC_MESSAGE_BYTES
REQUEST_BUDGET_BYTES_PER_CALLER: Final = 4 * MAX_GRPC_MESSAGE_BYTES
# The calls of one caller with a token that may wait for room in that budget at once: each
# holds a stream of the front door's pools while it waits, and one token's streams that sent
# their headers and never a message filled a pool, every other caller's calls answered 503.
# One more is refused at once with RESOURCE_EXHAUSTED. Without a token (authentication off,
# or a health check) every call is the same caller, which is not bounded (ADR 0140).
MAX_WAITING_CALLS_PER_CALLER: Final = FRONT_DOOR_POOL_STREAMS_PER_REPLICA // 4
# How long after its admission a call's message may take to arrive; a call still without it
# is cancelled, and its reservation given back: as long as the front door waits for a whole
# request (`app.envoy.REQUEST_TIMEOUT_SECONDS`; ADR 0140).
MESSAGE_ARRIVAL_SECONDS: Final = 20
# A request that opens a response stream (a feed, a health watch): the stream keeps it for as
# long as it lives, so it is not held in the budget above but bounded by size (ADR 0140).
MAX_STREAM_REQUEST_BYTES: Final = 16 * 1024
# The request streams (reflection: grpcurl holds one while its call runs) the server serves
# at once, each able to hold a message of MAX_GRPC_MESSAGE_BYTES; the next is refused with
# RESOURCE_EXHAUSTED until one ends (ADR 0140).
MAX_REQUEST_STREAMS: Final = 16
# With authentication on, the streams of the open services (health watches and reflection)
# the server runs at once that carry no valid token: the next is refused with
# RESOURCE_EXHAUSTED until one ends. Without a bound, 5,120 tokenless health watches took
# every call the server may run (MAX_SERVER_CALLS), every token holder's included. A health
# check, answered at once, is not counted: a flood of them through the front door would
# refuse the probes.
MAX_TOKENLESS_CALLS: Final = 64
# What Envoy buffers for one stream, and for one client connection, before flow control
# stops the sender: a watcher that stops reading costs about this much at the front door.
FRONT_DOOR_STREAM_BUFFER_BYTES: Final = 65_536
# A watcher whose next event has waited this long to be sent (it stopped reading and every
# buffer on the way is full) is ended; it resumes by revision (a setting, this its default).
STALLED_WATCHER_SECONDS: Final = 30
# Retention, compaction and DeleteTask delete in transactions of at most this many sessions,
# yielding to the event loop between them, so that ingest waits for one short transaction at
# most.
HOUSEKEEPING_BATCH_SESSIONS: Final = 50
# Publish receipts are kept at least this long after the update they record, so a retry of
# a `sequence` within it changes nothing; the feed window is at least this long too.
RECEIPT_WINDOW_SECONDS: Final = 24 * 60 * 60

# ACP v2 terminal updates (ADR 0085): a `terminalId` is at most this long, and the bytes one
# update's base64 `data` decodes to (a chunk, or a snapshot of which the newest
# MAX_OUTPUT_STREAM_BYTES are kept) at most this many; an `exitStatus.signal` names a signal.
MAX_TERMINAL_ID_CHARS: Final = 256
MAX_TERMINAL_DATA_BYTES: Final = 1 * _MIB
MAX_TERMINAL_SIGNAL_CHARS: Final = 32
# The terminals one tool update's `content` may name, each with a `terminalId` as long as a
# terminal update's. Every terminal named is looked up and linked when the update is
# stored, so the count bounds that work; real agents name one.
MAX_TERMINALS_PER_TOOL_UPDATE: Final = 64
# Terminal updates that arrive before any tool call names their terminal are held, per
# session, until one does (ADR 0086): at most this many, and this many decoded bytes of data.
MAX_HELD_TERMINAL_UPDATES: Final = 256
MAX_HELD_TERMINAL_BYTES: Final = 4 * _MIB
