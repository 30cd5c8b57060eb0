"""Framing: size-prefixed frames and request/response headers, both directions.

A frame is an int32 size followed by that many bytes. A request is a header
(v1: ApiKey, ApiVersion, CorrelationId, nullable ClientId with an int16
length; v2: the same plus a tagged-field section) followed by the body; a
response is a header (v0: CorrelationId; v1: plus a tagged-field section)
followed by the body. Which header version goes with which message version is
`Api.request_header_version` / `Api.response_header_version`.

The client uses `encode_request` / `decode_response`; the simulated endpoint
(`quorumctl.testing`) uses `decode_request` / `encode_response`.
"""

from __future__ import annotations

import struct

from ..schema.codec import DecodeError, codec
from .messages import APIS, REQUEST_HEADER, RESPONSE_HEADER, TAGGED_FIELDS, Api

_SIZE = struct.Struct(">i")
_EMPTY_TAGS = b"\x00"

_req_header = codec(REQUEST_HEADER)
_resp_header = codec(RESPONSE_HEADER)
_tags = codec(TAGGED_FIELDS)


def frame(payload: bytes) -> bytes:
    return _SIZE.pack(len(payload)) + payload


def encode_request(api: Api, version: int, correlation_id: int, client_id: str | None, body: dict) -> bytes:
    """A whole request frame (size prefix included)."""
    head = _req_header.encode(
        1,
        {
            "requestApiKey": api.key,
            "requestApiVersion": version,
            "correlationId": correlation_id,
            "clientId": client_id,
        },
    )
    if api.request_header_version(version) == 2:
        head += _EMPTY_TAGS
    return frame(head + codec(api.request).encode(version, body))


def decode_response(api: Api, version: int, payload: bytes) -> tuple[int, dict]:
    """(correlation id, body) of a response payload (size prefix removed)."""
    hv = api.response_header_version(version)
    head, pos = _resp_header.decode(hv, payload, 0)
    body, end = codec(api.response).decode(version, payload, pos)
    if end != len(payload):
        raise DecodeError(
            f"{api.name} v{version} response has {len(payload) - end} unexpected bytes after its end", end
        )
    return head["correlationId"], body


def decode_request(payload: bytes) -> tuple[dict, Api | None, dict | None]:
    """Server side: (header, api, body). `api` is None for an API key we do not
    implement; `body` is None when the version is outside what we implement
    (the caller decides how to answer, as a Kafka broker would)."""
    head, pos = _req_header.decode(1, payload, 0)
    api = APIS.get(head["requestApiKey"])
    if api is None:
        return head, None, None
    version = head["requestApiVersion"]
    if not api.lo <= version <= api.hi:
        return head, api, None
    if api.request_header_version(version) == 2:
        _, pos = _tags.decode(0, payload, pos)
    body, _ = codec(api.request).decode(version, payload, pos)
    return head, api, body


def encode_response(api: Api, version: int, correlation_id: int, body: dict) -> bytes:
    """Server side: a whole response frame."""
    hv = api.response_header_version(version)
    head = _resp_header.encode(hv, {"correlationId": correlation_id})
    return frame(head + codec(api.response).encode(version, body))
