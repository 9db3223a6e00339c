"""Sign-in, CSRF, upload limits and secrets: refused requests change nothing."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from console_support import CLEAN_ROWS, PASSWORD, Console, batch_csv, csrf_of, signed_in
from sqlalchemy import func, select

from payflow.console.operators import _DUMMY_HASH, _HASHER, OperatorError, add_operator
from payflow.console.signin_limits import SignInLimits, Verdict
from payflow.ledger.tables import Batch, ConsoleAction
from payflow.settings import SANDBOX_TOKEN_DEFAULT


def _counts(console: Console) -> tuple[int, int]:
    with console.ctx.ledger.engine.connect() as conn:
        batches = conn.execute(select(func.count()).select_from(Batch)).scalar_one()
        actions = conn.execute(select(func.count()).select_from(ConsoleAction)).scalar_one()
    return batches, actions


def test_pages_redirect_to_sign_in(console: Console) -> None:
    with httpx.Client(base_url=console.url) as anonymous:
        for path in ("/batches", "/upload", "/batches/x/approve"):
            response = anonymous.get(path)
            assert response.status_code == 303
            assert response.headers["location"].startswith("/login?next=")
        # A script sending the CSRF header reads JSON; a browser's form gets the sign-in page.
        scripted = anonymous.post("/upload", headers={"X-CSRF-Token": "x"})
        assert scripted.status_code == 401 and scripted.json() == {"error": "sign in first"}


def test_a_form_posted_after_signing_out_gets_the_sign_in_page(console: Console) -> None:
    # Found by use: a form posted after signing out in another tab showed the raw JSON
    # {"error":"sign in first"}, with no way on but the browser's address bar.
    maker = signed_in(console, "mia")
    token = csrf_of(maker.get("/upload").text)
    assert maker.post("/logout", data={"csrf": token}).status_code == 303  # the other tab
    before = _counts(console)
    upload = {"file": ("late.csv", batch_csv(CLEAN_ROWS), "text/csv")}
    posted = maker.post("/upload", files=upload, data={"csrf": token})
    assert posted.status_code == 303
    assert posted.headers["location"] == "/login?next=/upload&ended=1"
    page = maker.get(posted.headers["location"])
    assert page.status_code == 200 and 'name="password"' in page.text
    assert "You were signed out" in page.text and "nothing was changed" in page.text
    assert _counts(console) == before
    # Signing in goes back to the page the form was on, the approve form to itself.
    signed = maker.post(
        posted.headers["location"],
        data={"csrf": csrf_of(page.text), "name": "mia", "password": PASSWORD},
    )
    assert signed.headers["location"] == "/upload"
    for path, back in (
        ("/batches/abc/approve", "/batches/abc/approve"),
        ("/batches/abc/reconcile", "/batches/abc"),
        ("/logout", "/batches"),
    ):
        with httpx.Client(base_url=console.url) as anonymous:
            late = anonymous.post(path, data={"csrf": token})
            assert late.headers["location"] == f"/login?next={back}&ended=1", path


def test_session_cookie_is_httponly_and_samesite(console: Console) -> None:
    response = httpx.get(console.url + "/login")
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert signed_in(console, "mia").get("/batches").status_code == 200
    assert "secure" not in cookie  # plain http: a Secure cookie would never come back


def test_session_cookie_is_secure_when_served_over_https(console: Console) -> None:
    # Behind a TLS proxy on this host (uvicorn trusts 127.0.0.1's X-Forwarded-Proto) the console
    # is https to the browser, which sent the session over plain http to the same host too.
    https = {"X-Forwarded-Proto": "https"}
    client = httpx.Client(base_url=console.url, follow_redirects=False, headers=https)
    page = client.get("/login")
    assert "; secure" in page.headers["set-cookie"].lower()
    # httpx, seeing http, keeps the Secure cookie to itself as a browser would; the browser on
    # the proxy's https sends it back.
    assert not client.cookies.jar or all(c.secure for c in client.cookies.jar)
    session = page.headers["set-cookie"].split(";")[0]
    signed = client.post(
        "/login",
        data={"csrf": csrf_of(page.text), "name": "mia", "password": PASSWORD},
        headers={"Cookie": session},
    )
    assert signed.status_code == 303 and "; secure" in signed.headers["set-cookie"].lower()


def test_csrf_missing_or_wrong_is_refused_with_nothing_changed(console: Console) -> None:
    client = signed_in(console, "mia")
    before = _counts(console)
    upload = {"file": ("clean.csv", batch_csv(CLEAN_ROWS), "text/csv")}
    assert client.post("/upload", files=upload).status_code == 403
    assert client.post("/upload", files=upload, data={"csrf": "forged"}).status_code == 403
    wrong_header = client.post("/upload", files=upload, headers={"X-CSRF-Token": "forged"})
    assert wrong_header.status_code == 403
    assert "nothing was changed" in wrong_header.text
    assert _counts(console) == before
    # The same upload with the page's token is taken.
    token = csrf_of(client.get("/upload").text)
    assert client.post("/upload", files=upload, data={"csrf": token}).status_code == 303
    assert _counts(console)[0] == before[0] + 1


def test_oversized_and_non_spreadsheet_uploads_are_refused(console: Console) -> None:
    client = signed_in(console, "mia")
    token = csrf_of(client.get("/upload").text)
    before = _counts(console)
    big = batch_csv(CLEAN_ROWS) + b"x" * (console.ctx.max_upload_bytes + 70 * 1024)
    response = client.post("/upload", files={"file": ("big.csv", big)}, data={"csrf": token})
    assert response.status_code == 413
    assert "limit; nothing was stored" in response.text
    for name, data in (("notes.txt", b"hello"), ("fake.xlsx", b"not a zip"), ("x.pdf", b"%PDF")):
        refused = client.post("/upload", files={"file": (name, data)}, data={"csrf": token})
        assert refused.status_code == 400, name
        assert "nothing was stored" in refused.text
    assert _counts(console) == before
    assert not list((console.ctx.settings.reports_dir() / "console").glob("*/*"))


def test_token_and_full_requisites_appear_in_no_response(console: Console) -> None:
    maker = signed_in(console, "mia")
    token = csrf_of(maker.get("/upload").text)
    bodies = [
        maker.post(
            "/upload",
            files={"file": ("clean.csv", batch_csv(CLEAN_ROWS))},
            data={"csrf": token},
            follow_redirects=True,
        ).text
    ]
    batch_id = console.ctx.ledger.batches_with(["VALIDATED"])[0]
    for path in (
        "/batches",
        f"/batches/{batch_id}",
        f"/batches/{batch_id}/approve",
        f"/batches/{batch_id}/progress.json",
        f"/batches/{batch_id}/report.csv",
    ):
        response = maker.get(path)
        assert response.status_code == 200, path
        bodies.append(response.text)
        assert SANDBOX_TOKEN_DEFAULT not in str(response.url)
    for body in bodies:
        assert SANDBOX_TOKEN_DEFAULT not in body
        for row in CLEAN_ROWS:
            assert row[4] not in body, row[4]


def test_an_operator_named_like_another_in_other_capitals_is_refused(console: Console) -> None:
    # A checker "Mia" beside the maker "mia" approved mia's batch: two names, one person.
    for name in ("Mia", "MIA", "ＭＩＡ"):
        with pytest.raises(OperatorError, match="operator 'mia' already exists"):
            add_operator(console.ctx.ledger, name, "checker", PASSWORD)


def _sign_in(client: httpx.Client, name: str, password: str) -> httpx.Response:
    token = csrf_of(client.get("/login").text)
    return client.post("/login", data={"csrf": token, "name": name, "password": password})


def test_an_unknown_name_is_checked_against_a_hash_as_costly_as_an_operators() -> None:
    # The hash an unknown name is verified against is written out, not made at import: it must
    # have the parameters every operator's hash gets, or a wrong name would answer faster.
    assert not _HASHER.check_needs_rehash(_DUMMY_HASH)
    assert _HASHER.verify(_DUMMY_HASH, "not a password of anyone")


def test_a_names_failures_slow_it_down_and_never_refuse_it() -> None:
    # Five failures for a name refused it, the right password included, for 15 minutes: anyone
    # could lock a checker out. Now each attempt past three waits, 1 s doubling to 30 s at most.
    clock = [1000.0]
    limits = SignInLimits(clock=lambda: clock[0])
    waits = []
    for _ in range(10):
        verdict = limits.verdict(" Carl", "198.51.100.1")
        assert verdict.refused_for is None
        waits.append(verdict.delay)
        limits.failed("carl", "198.51.100.1")
    assert waits == [0, 0, 0, 1, 2, 4, 8, 16, 30, 30]
    clock[0] += 10  # ten seconds after the last failure: twenty of the thirty left to wait
    assert limits.verdict("CARL", "192.0.2.9").delay == 20
    limits.succeeded("carl", "192.0.2.9")
    assert limits.verdict("carl", "192.0.2.9").delay == 0


def test_an_address_past_its_limit_is_refused_except_for_names_signed_in_from_it() -> None:
    clock = [1000.0]
    limits = SignInLimits(clock=lambda: clock[0])
    limits.succeeded("mia", "127.0.0.1")
    for n in range(20):
        limits.failed(f"guess{n}", "127.0.0.1")
    assert limits.verdict("carl", "127.0.0.1").refused_for == 15 * 60
    assert limits.verdict("Mia", "127.0.0.1") == Verdict()  # she signed in from there
    assert limits.verdict("carl", "198.51.100.1") == Verdict()  # another address
    clock[0] += 15 * 60  # the oldest failure leaves the window
    assert limits.verdict("carl", "127.0.0.1") == Verdict()


def test_a_sign_in_form_past_16_kb_is_refused_unread(console: Console) -> None:
    # The sign-in form was the one POST parsed whole, before any session: a body of any size,
    # from anyone, went into memory (Starlette's form parser keeps each field's bytes).
    client = httpx.Client(base_url=console.url, follow_redirects=False, timeout=60)
    token = csrf_of(client.get("/login").text)
    form = f"csrf={token}&name=mia&password={PASSWORD}&pad="
    declared = client.post(
        "/login",
        content=form + "x" * (1024 * 1024),
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert declared.status_code == 413

    def chunked() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield form.encode()
        for _ in range(64):
            yield b"x" * 1024

    streamed = client.post(
        "/login", content=chunked(), headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert streamed.status_code == 413
    assert client.get("/batches").status_code == 303  # no session was given
    signed = client.post("/login", data={"csrf": token, "name": "mia", "password": PASSWORD})
    assert signed.status_code == 303 and signed.headers["location"] == "/batches"
