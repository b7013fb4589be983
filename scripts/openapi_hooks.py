"""Schemathesis hooks for scripts/check-openapi-behaviour.sh.

What docs/openapi.yaml says in words but OpenAPI 3.0 cannot put in a schema:

1. Requests generated as *valid* are made to follow the rules a schema cannot state (a request
   meant to be invalid is never touched, so every way of breaking a rule is still sent):
   - a name is at most 1024 bytes of UTF-8 (JSON Schema's maxLength counts characters);
   - POST /v1/upload reads its body as `uploadType` says (media, multipart, resumable; only a
     media upload may have no body), a media
     upload names either a new file (`name`) or an existing one (`fileId`), and a multipart
     body's metadata part comes before its content part (the content streams to disk).
   The pairing of `uploadType` and the body's media type is applied to invalid requests too
   (when `uploadType` itself is one of the three): otherwise a body would be judged by the
   schema of a kind the server was not asked to read.
2. A valid request may still meet the server's state - a stale version, a folder where a file
   was expected, an unknown page token. Those documented answers are not "a valid request
   rejected"; only exactly these error codes, on exactly these operations, are let through.
   Any other refusal of a valid request (a bad name rule, an encoding, a JSON field) still fails.
"""
import itertools
import json
import os

import schemathesis
from schemathesis.core import NOT_SET
from schemathesis.core.parameters import ParameterLocation

UPLOAD_TYPES = {
    "application/octet-stream": "media",
    "multipart/form-data": "multipart",
    "application/json": "resumable",
}

# Error codes a schema-valid request can get because of the server's state, by operation.
STATE_DEPENDENT = {
    "GET /v1/files": {"invalid_page_token", "not_a_folder"},
    "POST /v1/files": {"not_a_folder", "id_taken"},
    "PATCH /v1/files/{id}": {"not_a_folder", "root_immutable", "cycle", "precondition_required"},
    "DELETE /v1/files/{id}": {"root_immutable"},
    "GET /v1/files/{id}/content": {"not_a_file", "range_not_satisfiable"},
    "GET /v1/files/{id}/revisions/{rid}/content": {"range_not_satisfiable"},
    "POST /v1/files/{id}/revisions/{rid}/restore": {"quota_exceeded"},
    "POST /v1/upload": {"not_a_folder", "not_a_file", "quota_exceeded", "checksum_mismatch", "precondition_required", "id_taken"},
    # Either If-Match (replace) or If-None-Match: * (create) is needed, which a schema cannot say;
    # replacing an envelope that does not exist yet is 404.
    "PUT /v1/keys/envelope": {"precondition_required", "no_envelope"},
    "PUT /v1/upload/{id}/chunk": {"invalid_content_range", "misaligned_chunk", "wrong_chunk_size", "range_not_satisfiable",
                                  "checksum_mismatch", "quota_exceeded"},
    "GET /v1/changes": {"cursor_expired"},
}
# Operations that take a version (If-Match or baseVersion): a well-formed but stale one is a 412
# whose body is the current file (and a folder delete naming a cursor after which something below
# it changed, or an expired one, is 412 `subtree_changed`).
VERSIONED = {"PATCH /v1/files/{id}", "DELETE /v1/files/{id}", "POST /v1/files/{id}/revisions/{rid}/restore",
             "POST /v1/upload", "PUT /v1/upload/{id}/chunk", "PUT /v1/keys/envelope"}

_names = itertools.count()
NAME_BYTES = 1024


def _label(case):
    return f"{case.method.upper()} {case.operation.path}"


def _kind(case):
    """The uploadType a POST /v1/upload body asks for (no body: a media upload of an empty file)."""
    return "media" if case.body is NOT_SET or not case.media_type else UPLOAD_TYPES.get(case.media_type)


def _valid(case, location):
    return case.meta is None or not case.meta.is_negative_at(location)


def _fit_name(name):
    """`name` cut to 1024 bytes of UTF-8 on a character boundary (never to "." or "..")."""
    if not isinstance(name, str) or len(name.encode("utf-8", "surrogatepass")) <= NAME_BYTES:
        return name
    out, size = [], 0
    for ch in name:
        size += len(ch.encode("utf-8", "surrogatepass"))
        if size > NAME_BYTES:
            break
        out.append(ch)
    fitted = "".join(out)
    return fitted + "_" if fitted in (".", "..") else fitted


def _fit_names_in(container):
    if isinstance(container, dict) and "name" in container:
        container["name"] = _fit_name(container["name"])


@schemathesis.hook
def map_case(ctx, case):
    if _valid(case, ParameterLocation.QUERY):
        _fit_names_in(case.query)
    if _valid(case, ParameterLocation.BODY) and isinstance(case.body, dict):
        _fit_names_in(case.body)
        _fit_names_in(case.body.get("metadata"))
    if _label(case) == "POST /v1/upload" and isinstance(case.query, dict):
        kind = _kind(case)
        if kind is not None and case.query.get("uploadType") in UPLOAD_TYPES.values():
            case.query["uploadType"] = kind
        valid = _valid(case, ParameterLocation.QUERY) and _valid(case, ParameterLocation.BODY)
        if valid and kind == "media" and "fileId" not in case.query and "name" not in case.query:
            case.query["name"] = f"st-{next(_names)}"
        if valid and kind == "multipart" and isinstance(case.body, dict) and "content" in case.body:
            case.body["content"] = case.body.pop("content")   # after the metadata
    return case


def _breaks_unstated_rule(case, code):
    """Whether a schema-valid request breaks a rule of (1) above (when `map_case` did not run)."""
    names = [case.query.get("name") if isinstance(case.query, dict) else None]
    if isinstance(case.body, dict):
        names += [case.body.get("name"), (case.body.get("metadata") or {}).get("name")]
    if code == "invalid_name" and any(_fit_name(n) != n for n in names if isinstance(n, str)):
        return True
    if _label(case) == "POST /v1/upload" and isinstance(case.query, dict):
        kind = case.query.get("uploadType")
        if kind != _kind(case):
            return True
        if kind == "multipart" and isinstance(case.body, dict) and next(iter(case.body), None) != "metadata":
            return True
        return kind == "media" and "name" not in case.query and "fileId" not in case.query
    return False


def _keep(case, response):
    label = _label(case)
    if response.status_code == 412 and label in VERSIONED:
        return False, "412"
    try:
        code = json.loads(response.content)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return True, None
    if code in STATE_DEPENDENT.get(label, set()):
        return False, code
    return not _breaks_unstated_rule(case, code), code


@schemathesis.hook
def filter_failure(ctx, failure, case, response):
    if failure.code != "ST202":   # "Schema-valid request rejected"
        return True
    keep, why = _keep(case, response)
    log = os.environ.get("VAULT_ST_FILTER_LOG")   # what was let through, for review
    if log and not keep:
        with open(log, "a") as f:
            f.write(f"{_label(case)}\t{response.status_code}\t{why}\n")
    return keep
