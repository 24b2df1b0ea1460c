"""How many bytes of requests the server holds at once: in all, and for each caller (ADR 0140).

gRPC reads a call's whole message before any handler sees it, and every method accepts one of
up to MAX_GRPC_MESSAGE_BYTES. Without a bound, a client that sends many large calls at once
makes the server hold them all: 300 GetSession calls carrying 15 MB of unknown fields each grew
the server to 9 GB, and the allocator kept most of it afterwards.

So a call is admitted before its message is read. It reserves as much as a message may be
(`reservation_bytes`) and waits until that fits both the server's budget and its caller's share
of it. Once the message has arrived, the reservation shrinks to the message's size; it is given
back when the call ends. While a call waits, its stream holds only what HTTP/2 flow control
lets it buffer (the server turns off gRPC's window probing, which would let it grow to
megabytes). Waiting is fair between callers: a caller at its share waits alone, and the
others' calls go past it. A caller with a token has at most `max_waiting_per_caller` calls
waiting at once, and its next is refused: each waiting call holds a stream of the front door's
pools, which one caller's calls must not fill. With authentication on, so have the calls
without a token together: health checks that never sent their message waited without bound,
and filled every call the server may run. A call that waits too long ends by its
deadline, or by the front door's timeout. Once admitted, a call's message must arrive within
MESSAGE_ARRIVAL_SECONDS, or the call ends and gives its reservation back
(`_arriving_in_time`).

A response stream (a feed, a health watch) keeps its request for as long as it lives, so its
request gives its reservation back once read and is bounded by size instead
(MAX_STREAM_REQUEST_BYTES): open feeds never fill the budget.

A request stream (reflection; the service itself has none) would hold its reservation while
it waits for its next message, for as long as its client likes (grpcurl keeps its reflection
stream open until the call it made ends), so it does not wait: the server serves at most
`max_request_streams` at once, each holding a message's worth for its life, and refuses the
next with RESOURCE_EXHAUSTED until one ends.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import OrderedDict, deque
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc

from shellexec.api.auth import FRONT_DOOR_CHECKS, FRONT_DOOR_PROBE, current_caller
from shellexec.api.handlers import close_stream, refusal, rewrapped, when_call_ends
from shellexec.rules.limits import MAX_STREAM_REQUEST_BYTES, MESSAGE_ARRIVAL_SECONDS
from shellexec.service import UNRESTRICTED, InvalidArgumentError, ResourceExhaustedError

# The callers of the front door's own lines of calls (`auth`), which carry no token.
_FRONT_DOOR_LINES = frozenset({FRONT_DOOR_PROBE.name, FRONT_DOOR_CHECKS.name})


class Admission:
    """What one admitted call holds of the budget."""

    __slots__ = ("_arrived", "_budget", "_share", "held")

    def __init__(self, budget: RequestBudget, share: _Share, held: int) -> None:
        self._budget = budget
        self._share = share
        self.held = held
        self._arrived: int | None = None  # the size of the call's message, once it came

    def arrived(self, size: int) -> None:
        """The call's message has arrived and is `size` bytes (`settle` holds that much)."""
        if self._arrived is None:
            self._arrived = size

    def settle(self) -> None:
        """The call's request has ended: hold what its message took from now on. Not before:
        gRPC reads a second message whole (up to the message limit) before it is refused, and
        a call that had already given its reservation back held that unbudgeted (a review:
        24 calls each sending a 12 MB second message took 398 MB)."""
        if self._arrived is not None:
            self._give_back(self.held - min(self._arrived, self.held))

    def release(self) -> None:
        """The call has ended (idempotent)."""
        self._give_back(self.held)

    def _give_back(self, amount: int) -> None:
        if amount > 0:
            self.held -= amount
            self._budget._give_back(self._share, amount)


class _Share:
    """A caller's part of the budget: what its calls hold, and its calls that wait."""

    __slots__ = ("caller", "held", "waiting")

    def __init__(self, caller: str) -> None:
        self.caller = caller
        self.held = 0
        self.waiting: deque[asyncio.Future[Admission]] = deque()


class RequestBudget:
    """At most `total_bytes` of requests at once, `per_caller_bytes` of them one caller's;
    each call reserves `reservation_bytes` until its message has arrived."""

    def __init__(self, total_bytes: int, per_caller_bytes: int, reservation_bytes: int,
                 max_waiting_per_caller: int | None = None) -> None:
        if not 0 < reservation_bytes <= per_caller_bytes <= total_bytes:
            raise ValueError("a call's reservation must fit a caller's share, and the share "
                             "the total")
        self._total = total_bytes
        self._per_caller = per_caller_bytes
        self._reservation = reservation_bytes
        self._max_waiting = max_waiting_per_caller
        self.held = 0
        self._shares: dict[str, _Share] = {}
        # The shares with calls waiting, served in turn: one admitted moves to the back.
        self._waiting: OrderedDict[str, _Share] = OrderedDict()

    def waiting(self) -> int:
        """How many calls wait for room now (the metrics read it)."""
        return sum(len(share.waiting) for share in self._waiting.values())

    async def admit(self, caller: str, bounded: bool = True) -> Admission:
        """Reserves a message's worth for one of `caller`'s calls, waiting until it fits;
        ResourceExhaustedError when `caller` (a token's name; "" is every caller without
        one) already has `max_waiting_per_caller` calls waiting, unless not `bounded` (with
        authentication off every call is the one caller "", a laptop's own)."""
        share = self._shares.get(caller)
        if share is None:
            share = self._shares[caller] = _Share(caller)
        if not share.waiting and self._fits(share):
            return self._take(share)
        if (bounded and self._max_waiting is not None
                and len(share.waiting) >= self._max_waiting):
            raise ResourceExhaustedError(
                f"{self._max_waiting} of {_whose(caller)} already wait for their messages to "
                "be read, the most one caller may: let some finish (send their messages, or "
                "end them) before starting more")
        granted: asyncio.Future[Admission] = asyncio.get_running_loop().create_future()
        share.waiting.append(granted)
        self._waiting.setdefault(caller, share)
        try:
            return await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():  # admitted as it was cancelled
                granted.result().release()
            elif granted in share.waiting:
                share.waiting.remove(granted)
                self._settle_share(share)
            raise

    def _fits(self, share: _Share) -> bool:
        return (self.held + self._reservation <= self._total
                and share.held + self._reservation <= self._per_caller)

    def _take(self, share: _Share) -> Admission:
        self.held += self._reservation
        share.held += self._reservation
        return Admission(self, share, self._reservation)

    def _give_back(self, share: _Share, amount: int) -> None:
        self.held -= amount
        share.held -= amount
        if self._waiting:
            self._admit_waiting()
        self._settle_share(share)

    def _admit_waiting(self) -> None:
        """Admits waiting calls while they fit, one per caller in turn."""
        progressed = True
        while progressed and self._waiting and self.held + self._reservation <= self._total:
            progressed = False
            for share in list(self._waiting.values()):
                while share.waiting and share.waiting[0].done():  # cancelled, not yet woken
                    share.waiting.popleft()
                if share.waiting and self._fits(share):
                    share.waiting.popleft().set_result(self._take(share))
                    progressed = True
                    self._waiting.move_to_end(share.caller)
                self._settle_share(share)

    def _settle_share(self, share: _Share) -> None:
        """Forgets a share once it waits for nothing (and holds nothing)."""
        if not share.waiting:
            self._waiting.pop(share.caller, None)
            if not share.held:
                self._shares.pop(share.caller, None)


def _whose(caller: str) -> str:
    """The calls of `caller` in a refusal's words: the calls without a token (""), a line of
    the front door's health checks (named for what they are), or a token's."""
    if not caller:
        return "the calls without a token"
    if caller in _FRONT_DOOR_LINES:
        return f"the {caller}"
    return "this token's calls"


class RequestBudgetInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Admits each call's request through `budget`, as the call's caller
    (`auth.current_caller`: this acts after the authenticator, so it comes before it in the
    server's interceptors), and serves at most `max_request_streams` request streams."""

    def __init__(self, budget: RequestBudget, max_request_streams: int,
                 arrival_seconds: float = MESSAGE_ARRIVAL_SECONDS) -> None:
        self._budget = budget
        self._max_request_streams = max_request_streams
        self._arrival_seconds = arrival_seconds
        self.request_streams = 0

    async def intercept_service(
            self, continuation: Callable[[grpc.HandlerCallDetails],
                                         Awaitable[grpc.RpcMethodHandler]],
            handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        if handler.request_streaming:
            return rewrapped(handler, self._counting, self._counting,
                             handler.request_deserializer)
        caller = current_caller()
        try:
            # Without authentication every call is the one caller "", and not bounded; with
            # it, the calls without a token (NOBODY) are bounded as a token's are: health
            # checks that never sent their message filled every call the server may run.
            admission = await self._budget.admit(caller.name,
                                                 bounded=caller is not UNRESTRICTED)
        except ResourceExhaustedError as refused:
            return refusal(handler, grpc.StatusCode.RESOURCE_EXHAUSTED, str(refused))
        when_call_ends(admission.release)
        if handler.response_streaming:
            return _arriving_in_time(
                handler, _reading_stream_request(handler.request_deserializer, admission),
                self._arrival_seconds, _unless_oversized)
        return _arriving_in_time(handler, _settling(handler.request_deserializer, admission),
                                 self._arrival_seconds, ended=admission.settle)

    def _counting(self, behavior: Callable[..., Any], streamed: bool) -> Callable[..., Any]:
        """A request stream's behaviour, counted among the request streams once it asks for
        a message (a refusal never does, and costs nothing)."""
        return _given(behavior, self._counted)

    async def _counted(self, requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
        if self.request_streams >= self._max_request_streams:
            raise ResourceExhaustedError(
                f"the server already serves {self._max_request_streams} request streams "
                "(reflection), the most it may at once; try again once one has ended")
        self.request_streams += 1
        when_call_ends(self._request_stream_ended)
        async for request in requests:
            yield request

    def _request_stream_ended(self) -> None:
        self.request_streams -= 1


def _given(behavior: Callable[..., Any],
           transform: Callable[[Any], Any]) -> Callable[..., Any]:
    """`behavior`, given its request (or requests) through `transform`; of the same kind (an
    async generator, or a coroutine), which the interceptors around it look at."""
    if inspect.isasyncgenfunction(behavior):
        async def responses(request: Any, context: grpc.aio.ServicerContext
                            ) -> AsyncIterator[Any]:
            async for response in behavior(transform(request), context):
                yield response

        return responses

    async def response(request: Any, context: grpc.aio.ServicerContext) -> Any:
        return await behavior(transform(request), context)

    return response


def _arriving_in_time(handler: grpc.RpcMethodHandler, deserializer: Callable[[bytes], Any],
                     seconds: float, transform: Callable[[Any], Any] = lambda request: request,
                     ended: Callable[[], None] = lambda: None) -> grpc.RpcMethodHandler:
    """The handler of a method taking one request, made to take it as a stream so that its
    message is waited for here, at most `seconds`.

    gRPC waits for a single request's message before any code of ours runs, and for as long
    as the client likes: four calls that sent their headers and never a message held their
    caller's whole share of the budget, every other call of that caller waiting behind them
    (on the gRPC port, which has no deadline of its own, for ever; and gRPC never ends a call
    whose stream closes without a message). A request stream is read only when asked, so
    here the call ends DEADLINE_EXCEEDED once `seconds` have passed, and INVALID_ARGUMENT
    when the stream closes empty, giving its reservation back either way. On the wire the
    two kinds of handler are the same."""
    async def first(requests: AsyncIterable[Any], context: grpc.aio.ServicerContext) -> Any:
        iterator = aiter(requests)
        came = False
        try:
            async with asyncio.timeout(seconds):
                async for request in iterator:
                    came = True
                    value = transform(request)
                    await _ended(iterator)
                    ended()
                    return value
        except TimeoutError:
            missing = "did not end" if came else "its message did not arrive"
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                                f"request: {missing} within {seconds:g} s")
        finally:
            await close_stream(iterator)
        raise InvalidArgumentError("request", "the call ended without its message")

    behavior = handler.unary_stream or handler.unary_unary
    serializer = handler.response_serializer
    if inspect.isasyncgenfunction(behavior):
        async def responses(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext
                            ) -> AsyncIterator[Any]:
            async for response in behavior(await first(requests, context), context):
                yield response

        return grpc.stream_stream_rpc_method_handler(responses, deserializer, serializer)

    # A single response, or responses written with `context.write`.
    async def response(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Any:
        return await behavior(await first(requests, context), context)

    kind = (grpc.stream_stream_rpc_method_handler if handler.response_streaming
            else grpc.stream_unary_rpc_method_handler)
    return kind(response, deserializer, serializer)


async def _ended(requests: AsyncIterator[Any]) -> None:
    """Waits for the client to end the request whose one message it sent; a second message
    is refused. Answered before that end, a call whose answer is larger than the client's
    receive window was cut by the front door (RST_STREAM INTERNAL_ERROR: Envoy resets a
    client's stream that is not ended once its answer is complete, dropping what it still
    held of the answer): a client that ends its request in a frame of its own, as Node's
    HTTP/2 does, heard INTERNAL for 5-15 % of publishes whose answer was over 64 KiB, which
    the server had stored. gRPC's own single-request handlers waited for that end too."""
    async for _ in requests:
        raise InvalidArgumentError("request", "this method takes one message; the call sent "
                                              "more")


def _settling(deserializer: Callable[[bytes], Any] | None,
              admission: Admission) -> Callable[[bytes], Any]:
    def deserialize(data: bytes) -> Any:
        admission.arrived(len(data))
        return data if deserializer is None else deserializer(data)
    return deserialize


@dataclass(frozen=True, slots=True)
class _Oversized:
    """What the deserializer of a stream's request gives instead of a request too large."""

    size: int


def _reading_stream_request(deserializer: Callable[[bytes], Any] | None,
                            admission: Admission) -> Callable[[bytes], Any]:
    """A response stream's request gives its reservation back once read: a stream lives for
    as long as its client likes, and its request with it, so it is bounded by size instead
    (MAX_STREAM_REQUEST_BYTES; its number by the bounds on feeds and the front door's)."""
    def deserialize(data: bytes) -> Any:
        admission.release()
        if len(data) > MAX_STREAM_REQUEST_BYTES:
            return _Oversized(len(data))
        return data if deserializer is None else deserializer(data)
    return deserialize


def _unless_oversized(request: Any) -> Any:
    if isinstance(request, _Oversized):
        raise InvalidArgumentError(
            "request", f"is {request.size} bytes; a request that opens a stream may be at most "
            f"{MAX_STREAM_REQUEST_BYTES}")
    return request
