"""The console's Starlette application: sign-in, upload, approve, batch, batches.

Every page needs a signed-in operator (else a redirect to /login); every POST needs the
session's CSRF token (form field `csrf` or header `X-CSRF-Token`) and is refused otherwise,
before anything is read or changed.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from payflow.acts import Actor
from payflow.acts.actor import CONSOLE
from payflow.acts.auth import CODE_MINUTES, issue_code
from payflow.acts.history import batch_history
from payflow.api.errors import AuthError, PaymentsApiError
from payflow.approvals import (
    ApprovalRefused,
    Approved,
    PolicyError,
    approval_requirement,
    status_under,
)
from payflow.approvals.standing import standing
from payflow.console import pages
from payflow.console.breaks import at_separators
from payflow.console.context import ConsoleContext
from payflow.console.decisions import decide, is_submitted, submit_for_approval
from payflow.console.intake import (
    UploadRefused,
    has_rejects,
    rejects_file,
    sheet_choice_text,
    source_of,
    take_upload,
)
from payflow.console.kept_uploads import KeptUploads
from payflow.console.operators import Operator, check_password
from payflow.console.paying import (
    NotInterrupted,
    can_go_on,
    go_on_paying,
    holds_no_token,
    last_heard,
    rows_left,
)
from payflow.console.reconciling import reconcile_now
from payflow.console.reruns import RerunChoice, rerun_choice, rerun_rows, review_rerun
from payflow.console.sessions import COOKIE, Session, Sessions, csrf_matches
from payflow.console.stored import stored_exists, stored_response
from payflow.ledger.actions import record_action
from payflow.links.store import LinkStore
from payflow.reconcile import FailureTableError
from payflow.refunds.report import write_refund_report
from payflow.reporting.reconciliation import write_batch_report
from payflow.rerun import RerunRefused
from payflow.runtime import ConfigurationError
from payflow.schemas.iso4217 import amount_text
from payflow.serving import BodyTooLarge, read_form
from payflow.wording import api_trouble, counted

logger = logging.getLogger(__name__)
HERE = Path(__file__).parent
BATCH_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
FORM_OVERHEAD = 64 * 1024  # multipart boundaries and the small fields beside the file
# A name, a password and a token: anything longer is not a sign-in, and unread it costs nothing.
SIGNIN_FORM_BYTES = 16 * 1024
SESSION_ENDED = (
    "You were signed out (in another tab, or after an hour without a request), so nothing "
    "was changed: sign in and do it again."
)
Handler = Callable[[Request, Session], Awaitable[Response]]


def create_app(ctx: ConsoleContext) -> Starlette:
    """The console over `ctx` (its ledger, API target and limits)."""
    sessions = Sessions()
    if ctx.kept_uploads is None:
        ctx.kept_uploads = KeptUploads(ctx.kept_uploads_dir())
    kept = ctx.kept_uploads
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters["money"] = amount_text
    templates.env.filters["counted"] = counted
    templates.env.filters["breakable"] = at_separators
    templates.env.filters["batch_links"] = pages.batch_links
    limit_mb = ctx.max_upload_bytes / (1024 * 1024)
    limit_text = f"{limit_mb:g} MB" if limit_mb >= 1 else f"{ctx.max_upload_bytes // 1024} KB"

    def render(
        request: Request, session: Session, name: str, status: int = 200, **values: Any
    ) -> Response:
        context = {
            "me": session.operator,
            "csrf": session.csrf,
            "limit_text": limit_text,
            "sandbox": ctx.target.sandbox,
            **values,
        }
        return templates.TemplateResponse(request, name, context, status_code=status)

    def message(request: Request, session: Session, status: int, text: str) -> Response:
        return render(request, session, "message.html", status, text=text)

    async def posted_form(request: Request) -> FormData:
        cap = ctx.max_upload_bytes + FORM_OVERHEAD
        return await read_form(request, cap, max_files=1, max_fields=200, max_part_size=cap)

    def page(
        roles: tuple[str, ...] = (), *, refund_batches: bool = False
    ) -> Callable[[Handler], Callable[[Request], Awaitable[Response]]]:
        def wrap(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
            async def endpoint(request: Request) -> Response:
                session = sessions.get(request.cookies.get(COOKIE))
                if session is None or session.operator is None:
                    if request.method == "GET":
                        target = quote(request.url.path, safe="/")
                        return RedirectResponse(f"/login?next={target}", status_code=303)
                    if "x-csrf-token" in request.headers:  # a script: it reads JSON
                        return JSONResponse({"error": "sign in first"}, status_code=401)
                    # A browser's form, posted after signing out in another tab or an hour
                    # idle: the sign-in page, then back to the page the form was on.
                    target = quote(_page_of(request.url.path), safe="/")
                    return RedirectResponse(f"/login?next={target}&ended=1", status_code=303)
                if request.method == "POST":
                    try:
                        form = await posted_form(request)
                    except BodyTooLarge:
                        return message(
                            request,
                            session,
                            413,
                            f"The file is larger than the {limit_text} limit; nothing was "
                            "stored. Split the batch into smaller files.",
                        )
                    given = request.headers.get("x-csrf-token") or form.get("csrf")
                    if not csrf_matches(session, given if isinstance(given, str) else None):
                        return message(
                            request,
                            session,
                            403,
                            "This form expired or came from another page; nothing was changed. "
                            "Go back, reload the page and try again.",
                        )
                    request.state.form = form
                if roles and not any(session.operator.has(role) for role in roles):
                    return message(
                        request,
                        session,
                        403,
                        f"This needs the {' or '.join(roles)} role; you are a "
                        f"{session.operator.role}. Nothing was changed.",
                    )
                batch_id = request.path_params.get("batch_id")
                if batch_id is not None and (
                    not BATCH_ID.match(batch_id) or not ctx.ledger.batch_exists(batch_id)
                ):
                    return message(request, session, 404, "No such batch.")
                if batch_id is not None and LinkStore(ctx.ledger.engine).batch_exists(batch_id):
                    # Registered beside the others for its approval only: its rows are claims.
                    return message(
                        request,
                        session,
                        409,
                        f"{batch_id} is a links batch: `payflow status {batch_id}` shows its "
                        f"approval, `payflow links report {batch_id}` its claims and payouts. "
                        "Nothing was changed.",
                    )
                if (
                    batch_id is not None
                    and not refund_batches
                    and ctx.ledger.refunds.batch_exists(batch_id)
                ):
                    # A refund batch has no payouts: approved, paid or reconciled as a payout
                    # batch it read as done with nothing checked.
                    return message(
                        request,
                        session,
                        409,
                        f"{batch_id} is a refund batch: its page shows its refunds, and "
                        f"`payflow approve {batch_id}`, `payflow refund FILE` or `payflow "
                        f"status {batch_id}` act on it. "
                        "Nothing was changed.",
                    )
                try:
                    return await handler(request, session)
                except ConfigurationError as exc:
                    # Raised before any request: a console of makers and checkers holds no API
                    # token, and what asks the service (reconcile, rerun) says so in a line.
                    text = (
                        "This console holds no payments API token, so it cannot ask the "
                        "service: the paying process (which holds it) does this"
                        if holds_no_token(ctx)
                        else str(exc)[:1].upper() + str(exc)[1:]
                    )
                    return message(request, session, 503, f"{text}. Nothing was sent.")
                except (FailureTableError, PolicyError) as exc:
                    # Both are read before anything is written: a settings file to fix, not a
                    # crash to show.
                    return message(
                        request,
                        session,
                        500,
                        f"A settings file cannot be used: {exc}. Nothing was changed; fix the "
                        "file (or its setting) and reload.",
                    )

            return endpoint

        return wrap

    def told(session: Session, batch_id: str, notice: str) -> Response:
        """To the batch's page, which says `notice` once (kept in the session, not the URL)."""
        session.tell(batch_id, notice)
        return RedirectResponse(f"/batches/{batch_id}", status_code=303)

    def me(session: Session) -> Operator:
        assert session.operator is not None  # `page` lets only signed-in sessions through
        return session.operator

    # --- sign-in ---------------------------------------------------------------------------

    async def login(request: Request) -> Response:
        session_id = request.cookies.get(COOKIE)
        session = sessions.get(session_id)
        fresh = session is None
        if session is None:
            session_id, session = sessions.new()
        status, error = 200, None
        if request.method == "POST":
            try:
                form = await read_form(request, SIGNIN_FORM_BYTES, max_files=0, max_fields=10)
            except BodyTooLarge:
                return JSONResponse({"error": "sign-in form too large"}, status_code=413)
            given = form.get("csrf")
            if not csrf_matches(session, given if isinstance(given, str) else None):
                status, error = 403, "The sign-in form expired; try again."
            else:
                name, password = str(form.get("name", "")), str(form.get("password", ""))
                # The peer's address, or the one a proxy named in --forwarded-allow-ips gave.
                address = request.client.host if request.client else ""
                verdict = ctx.signin_limits.verdict(name, address)
                operator = None
                if verdict.refused_for is not None:
                    # Not checked at all, the right password included: that is the limit.
                    logger.warning(
                        "sign-in refused unchecked: too many failures from address %s", address
                    )
                    status = 429
                    error = (
                        "Too many failed sign-ins from this address; try again in "
                        f"{counted(math.ceil(verdict.refused_for / 60), 'minute')}."
                    )
                else:
                    # Slowed, never refused: a stranger's failures cannot lock an operator out.
                    await asyncio.sleep(verdict.delay)
                    operator = await run_in_threadpool(check_password, ctx.ledger, name, password)
                    if operator is None:
                        ctx.signin_limits.failed(name, address)
                        _log_failure(ctx, name, address)
                        status, error = 401, "Wrong name or password."
                if operator is not None:
                    ctx.signin_limits.succeeded(name, address)
                    sessions.drop(session_id)
                    session_id, _ = sessions.new(operator)
                    record_action(ctx.ledger, operator.name, "signed_in")
                    signed: Response = RedirectResponse(_next(request), status_code=303)
                    _set_cookie(request, signed, session_id)
                    return signed
        if error is None and request.query_params.get("ended") == "1":
            error = SESSION_ENDED
        response = render(request, session, "login.html", status, error=error)
        if fresh or status != 200:
            _set_cookie(request, response, session_id or "")
        return response

    @page()
    async def logout(request: Request, session: Session) -> Response:
        kept.drop(session.kept)
        sessions.drop(request.cookies.get(COOKIE))
        record_action(ctx.ledger, me(session).name, "signed_out")
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    # --- batches ---------------------------------------------------------------------------

    async def home(request: Request) -> Response:
        return RedirectResponse("/batches", status_code=303)

    async def favicon(request: Request) -> Response:
        # Browsers ask for it beside every page whatever the page links: it was a 404 each time.
        return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml")

    @page()
    async def batches(request: Request, session: Session) -> Response:
        raw_page = request.query_params.get("page", "1")
        number = int(raw_page) if raw_page.isdigit() and int(raw_page) > 0 else 1
        lines, pages_total = await run_in_threadpool(pages.batch_page, ctx, number)
        if number > pages_total:
            # Past the last page (an old link, a typed number): "No batches yet" there misled.
            return RedirectResponse(f"/batches?page={pages_total}", status_code=303)
        return render(request, session, "batches.html", lines=lines, page=number, pages=pages_total)

    @page()
    async def upload_form(request: Request, session: Session) -> Response:
        return render(request, session, "upload.html", result=None, error=None)

    @page(roles=("maker",))
    async def upload(request: Request, session: Session) -> Response:
        form = request.state.form
        file, sheet = form.get("file"), form.get("sheet")
        if isinstance(file, UploadFile) and file.filename:
            filename, data = file.filename, await file.read()
            kept.drop(session.kept)  # a file chosen again replaces the one kept
            session.kept = None
        else:
            chosen = await run_in_threadpool(_take_kept, kept, session, form.get("kept"))
            if isinstance(chosen, str):
                return render(request, session, "upload.html", 400, result=None, error=chosen)
            filename, data = chosen
        try:
            result = await run_in_threadpool(
                take_upload,
                ctx,
                filename,
                data,
                me(session),
                sheet if isinstance(sheet, str) and sheet else None,
            )
        except UploadRefused as exc:
            error = str(exc)
            if exc.sheets:
                session.kept = await run_in_threadpool(kept.keep, filename, data, exc.sheets)
                error = sheet_choice_text(error, session.kept, kept.keep_seconds)
            return render(
                request,
                session,
                "upload.html",
                400,
                result=None,
                error=error,
                sheets=exc.sheets,
                kept=session.kept,
            )
        session.upload = result
        return RedirectResponse(f"/upload/{result.batch_id}", status_code=303)

    @page()
    async def uploaded(request: Request, session: Session) -> Response:
        batch_id = request.path_params["batch_id"]
        result = session.upload
        if result is None or result.batch_id != batch_id:
            # Another browser's upload, or a session since ended: the batch page has its state.
            return RedirectResponse(f"/batches/{batch_id}", status_code=303)
        # The figures as the ledger holds them now, not as they were at the upload.
        counts = ctx.ledger.batch_counts(batch_id)
        result = replace(result, counts=counts, source=source_of(ctx, batch_id))
        return render(
            request,
            session,
            "upload.html",
            result=result,
            error=None,
            submitted=is_submitted(ctx, batch_id),
            state=pages.batch_state(ctx, batch_id, counts),
            conflicts=pages.conflicts(ctx, batch_id),
            # Only of rows the batch may send: an outlier on a CONFLICT row is never paid.
            warnings=ctx.ledger.intake_warnings(batch_id),
        )

    @page(refund_batches=True)
    async def batch(request: Request, session: Session) -> Response:
        batch_id = request.path_params["batch_id"]
        refunds = await run_in_threadpool(pages.refund_batch, ctx, batch_id)
        if refunds is not None:
            return render(
                request,
                session,
                "refund_batch.html",
                batch_id=batch_id,
                source=source_of(ctx, batch_id),
                facts=ctx.ledger.batch_facts(batch_id),
                refunds=refunds,
                approval=await run_in_threadpool(standing, ctx.ledger, batch_id),
                history=await run_in_threadpool(batch_history, ctx.ledger, batch_id),
            )
        return await _batch_page(request, session, batch_id)

    async def _batch_page(
        request: Request,
        session: Session,
        batch_id: str,
        status: int = 200,
        rerun_error: str | None = None,
        choice: RerunChoice | None = None,
    ) -> Response:
        """The batch's page; `choice` and `rerun_error`: the rerun form as the maker left it,
        and what it still needs (it showed a bare message and dropped the chosen rows)."""
        counts = ctx.ledger.batch_counts(batch_id)
        state = pages.batch_state(ctx, batch_id, counts)
        summary = await run_in_threadpool(pages.summary, ctx, batch_id)
        facts = ctx.ledger.batch_facts(batch_id)
        return render(
            request,
            session,
            "batch.html",
            status,
            batch_id=batch_id,
            rerun_end=pages.rerun_end(batch_id),
            source=source_of(ctx, batch_id),
            facts=facts,
            counts=counts,
            final=pages.final_figures(counts),
            state_rows=pages.state_rows(ctx, batch_id, counts, state),
            state=state,
            summary=summary,
            bars=pages.chart_bars(summary.outcomes),
            history=batch_history(ctx.ledger, batch_id),
            has_rejects=has_rejects(ctx, batch_id),
            submitted=is_submitted(ctx, batch_id),
            approved_by=pages.approved_elsewhere(ctx, batch_id, state),
            go_on=can_go_on(ctx, batch_id, counts),
            waiting=pages.waiting_note(ctx, batch_id, state),
            rows_left=rows_left(counts),
            not_reconciled=pages.why_not_reconcile(state, counts),
            rechecked=pages.rechecked_line(ctx, batch_id),
            no_report=pages.why_no_report(state, counts),
            report_versions=ctx.ledger.report_versions(batch_id),
            last_heard=last_heard(ctx, batch_id),
            notice=session.notice_for(batch_id),
            rerun_error=rerun_error,
            choice=choice or RerunChoice(),
        )

    @page(roles=("maker",))
    async def submit(request: Request, session: Session) -> Response:
        batch_id = request.path_params["batch_id"]
        try:
            submit_for_approval(ctx, batch_id, me(session))
        except ApprovalRefused as exc:
            return message(request, session, 409, f"{exc}. Nothing was changed.")
        return RedirectResponse(f"/batches/{batch_id}", status_code=303)

    @page()
    async def approve_form(request: Request, session: Session) -> Response:
        return await _approval_page(request, session, None, 200)

    async def _approval_page(
        request: Request, session: Session, error: str | None, status: int
    ) -> Response:
        batch_id = request.path_params["batch_id"]
        requirement = approval_requirement(ctx.ledger, batch_id)
        counts = ctx.ledger.batch_counts(batch_id)
        state = pages.batch_state(ctx, batch_id, counts)
        return render(
            request,
            session,
            "approve.html",
            status,
            batch_id=batch_id,
            requirement=requirement,
            earlier_groups=pages.earlier_groups(requirement.earlier),
            approval=status_under(ctx.ledger, requirement),
            totals=ctx.ledger.batch_totals(batch_id),
            state=state,
            approved_by=pages.approved_elsewhere(ctx, batch_id, state),
            error=error,
        )

    @page(roles=("checker",))
    async def approve(request: Request, session: Session) -> Response:
        batch_id = request.path_params["batch_id"]
        form = request.state.form
        choice = form.get("decision")
        if choice not in ("approve", "decline"):
            return await _approval_page(request, session, "Choose approve or decline.", 400)
        try:
            status, started = await run_in_threadpool(
                lambda: decide(
                    ctx,
                    batch_id,
                    me(session),
                    approve=choice == "approve",
                    note=str(form.get("note", "")).strip()[:1000],
                    acknowledge_warnings=form.get("acknowledge") == "yes",
                )
            )
        except ApprovalRefused as exc:
            return await _approval_page(request, session, f"Refused: {exc}.", 403)
        notice = started or (
            "declined: nothing will be paid"
            if choice == "decline"
            else f"recorded; the batch is {type(status).__name__}"
        )
        if not isinstance(status, Approved) and choice == "approve":
            notice += " (another checker must approve too)"
        return told(session, batch_id, notice)

    @page(roles=("checker",))
    async def go_on(request: Request, session: Session) -> Response:
        batch_id = request.path_params["batch_id"]
        try:
            payer = Actor(me(session), CONSOLE)
            notice = await run_in_threadpool(go_on_paying, ctx, batch_id, payer)
        except NotInterrupted as exc:
            return message(request, session, 409, f"Not started: {exc}.")
        return told(session, batch_id, notice)

    @page(roles=("checker",))
    async def approval_code(request: Request, session: Session) -> Response:
        # Prefect's pause form counts an answer only with a one-time code: the checker gets it
        # here (shown once, in the page's notice; the ledger keeps its hash).
        batch_id = request.path_params["batch_id"]
        code = await run_in_threadpool(
            issue_code, ctx.ledger, batch_id, Actor(me(session), CONSOLE)
        )
        notice = (
            f"one-time approval code for Prefect's pause form: {code} (yours, for this batch, "
            f"once, within {CODE_MINUTES:g} minutes)"
        )
        return told(session, batch_id, notice)

    @page()
    async def progress(request: Request, session: Session) -> Response:
        return JSONResponse(pages.progress(ctx, request.path_params["batch_id"]))

    @page(roles=("maker",))
    async def rerun(request: Request, session: Session) -> Response:
        batch_id = request.path_params["batch_id"]
        form = request.state.form
        values = {k: v for k, v in form.multi_items() if isinstance(v, str) and k != "row"}
        rows = [v for v in form.getlist("row") if isinstance(v, str)]
        choice = rerun_choice(values, rows)
        step = values.get("step", "send")
        if step == "edit":  # back from the review to change the choice: the form as it was
            return await _batch_page(request, session, batch_id, choice=choice)
        try:
            if step == "review":
                review = await run_in_threadpool(review_rerun, ctx, batch_id, me(session), choice)
                return render(
                    request,
                    session,
                    "rerun_review.html",
                    batch_id=batch_id,
                    review=review,
                    choice=choice,
                )
            started = await run_in_threadpool(rerun_rows, ctx, batch_id, me(session), choice)
        except (RerunRefused, PaymentsApiError) as exc:
            # The service's lists check a correction, and each row is asked about again before
            # it is rerun: an API that cannot answer is said here, the choice kept, not a 500.
            text = (
                api_trouble(exc, then="nothing was sent; try again", sandbox=ctx.target.sandbox)
                if isinstance(exc, PaymentsApiError)
                else str(exc)
            )
            error = text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
            return await _batch_page(request, session, batch_id, 400, error, choice)
        if started.rerun_batch_id is None:
            return message(request, session, 409, "Nothing to rerun: " + "; ".join(started.dropped))
        notice = "rerun registered; a checker must approve it"
        if started.dropped:
            notice += " (left out: " + "; ".join(started.dropped) + ")"
        return told(session, started.rerun_batch_id, notice)

    @page()
    async def reconcile(request: Request, session: Session) -> Response:
        batch_id = request.path_params["batch_id"]
        why_not = await run_in_threadpool(pages.why_not_reconcile_batch, ctx, batch_id)
        if why_not is not None:  # a page read before the state changed, or a script
            return message(request, session, 409, f"Not reconciled: {why_not}. Nothing changed.")
        try:
            notice = await run_in_threadpool(reconcile_now, ctx, batch_id, me(session))
        except AuthError:
            return message(request, session, 502, "The payments API refused the token.")
        except PaymentsApiError as exc:
            return message(request, session, 502, f"The payments API failed: {exc}. Try later.")
        return told(session, batch_id, notice)

    @page(refund_batches=True)
    async def report(request: Request, session: Session) -> Response:
        batch_id, suffix = request.path_params["batch_id"], request.path_params["suffix"]
        if suffix not in ("csv", "xlsx"):
            return message(request, session, 404, "Reports are CSV or XLSX.")
        refunds = ctx.ledger.refunds.batch_exists(batch_id)
        written = await run_in_threadpool(
            lambda: (
                write_refund_report(
                    ctx.batch_dir(batch_id),
                    batch_id,
                    ctx.ledger.refunds.rows(batch_id),
                    sandbox=ctx.target.sandbox,
                )
                if refunds
                else write_batch_report(
                    ctx.ledger,
                    batch_id,
                    ctx.batch_dir(batch_id),
                    sandbox=ctx.target.sandbox,
                    made_by=me(session).name,
                )
            )
        )
        path = written.csv if suffix == "csv" else written.xlsx
        record_action(ctx.ledger, me(session).name, "report_downloaded", batch_id, suffix)
        name = "refunds" if refunds else "report"
        return stored_response(path, f"{batch_id}-{name}.{suffix}")

    @page()
    async def report_version(request: Request, session: Session) -> Response:
        batch_id, suffix = request.path_params["batch_id"], request.path_params["suffix"]
        wanted = request.path_params["version_id"]
        kept = [v for v in ctx.ledger.report_versions(batch_id) if v.id == wanted]
        if suffix not in ("csv", "xlsx") or not kept:
            return message(request, session, 404, "No such kept report of this batch.")
        place = kept[0].csv_path if suffix == "csv" else kept[0].xlsx_path
        try:
            there = await run_in_threadpool(stored_exists, place)
        except OSError as exc:
            return message(request, session, 502, f"Reports storage out of reach: {exc}.")
        if not there:
            return message(request, session, 404, "That report's file is no longer there.")
        return stored_response(place)

    @page()
    async def rejects(request: Request, session: Session) -> Response:
        batch_id, suffix = request.path_params["batch_id"], request.path_params["suffix"]
        try:
            path = await run_in_threadpool(
                lambda: rejects_file(ctx, batch_id, suffix) if suffix in ("csv", "xlsx") else None
            )
        except OSError as exc:
            return message(request, session, 502, f"Reports storage out of reach: {exc}.")
        if path is None:
            return message(request, session, 404, "This batch has no rejects report.")
        return stored_response(path, f"{batch_id}-rejects.{suffix}")

    routes = [
        Route("/", home),
        Route("/favicon.ico", favicon),
        Route("/login", login, methods=["GET", "POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/batches", batches),
        Route("/upload", upload_form, methods=["GET"]),
        Route("/upload", upload, methods=["POST"]),
        Route("/upload/{batch_id}", uploaded, methods=["GET"]),
        Route("/batches/{batch_id}", batch),
        Route("/batches/{batch_id}/submit", submit, methods=["POST"]),
        Route("/batches/{batch_id}/approve", approve_form, methods=["GET"]),
        Route("/batches/{batch_id}/approve", approve, methods=["POST"]),
        Route("/batches/{batch_id}/go-on", go_on, methods=["POST"]),
        Route("/batches/{batch_id}/code", approval_code, methods=["POST"]),
        Route("/batches/{batch_id}/progress.json", progress),
        Route("/batches/{batch_id}/rerun", rerun, methods=["POST"]),
        Route("/batches/{batch_id}/reconcile", reconcile, methods=["POST"]),
        Route("/batches/{batch_id}/report.{suffix:str}", report),
        Route("/batches/{batch_id}/reports/{version_id:int}.{suffix:str}", report_version),
        Route("/batches/{batch_id}/rejects.{suffix:str}", rejects),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    return Starlette(routes=routes, middleware=[Middleware(BaseHTTPMiddleware, dispatch=_headers)])


async def _headers(request: Request, call_next: Any) -> Response:
    """No framing, no sniffing, no referrer, nothing cached but the static files."""
    response: Response = await call_next(request)
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"
    )
    if not request.url.path.startswith("/static"):
        response.headers["Cache-Control"] = "no-store"
    return response


def _take_kept(kept: KeptUploads, session: Session, token: object) -> tuple[str, bytes] | str:
    """The workbook this session keeps for the form's sheet choice (its name and bytes, now
    deleted), or why there is none to check."""
    if not isinstance(token, str) or not token:
        return "Choose a file first."
    held = session.kept
    if held is None or not secrets.compare_digest(held.token.encode(), token.encode()):
        # Another tab's upload replaced it, or it was used: this form's sheets may be another's.
        return (
            "The file this form offered sheets of is no longer kept; nothing was stored. "
            "Choose the file again."
        )
    session.kept = None
    data = kept.take(held)
    if data is None:
        return (
            f"{held.filename} was kept for {counted(round(kept.keep_seconds / 60), 'minute')} "
            "while you chose its sheet, and that time is over; nothing was stored. Choose the "
            "file again."
        )
    return held.filename, data


def _page_of(path: str) -> str:
    """The page whose form posts to `path`: `/batches/<id>/approve` its form, another batch
    action its batch's page, an upload the upload page."""
    parts = path.strip("/").split("/")
    if parts[0] == "batches" and len(parts) >= 2:
        on_form = parts[2:] == ["approve"]
        return f"/batches/{parts[1]}" + ("/approve" if on_form else "")
    return "/upload" if parts == ["upload"] else "/batches"


def _next(request: Request) -> str:
    """Where to go after signing in: a path of this site only."""
    target = request.query_params.get("next", "/batches")
    return target if target.startswith("/") and not target.startswith("//") else "/batches"


def _log_failure(ctx: ConsoleContext, name: str, address: str) -> None:
    """One log line per failed sign-in: the name as typed (repr: no forged lines), the address,
    the name's count and its next delay; never the password."""
    failures = ctx.signin_limits.name_failures(name)
    logger.warning(
        "sign-in failed for name %r from %s: %d failures for this name in 15 minutes; its "
        "next attempt waits %g s",
        name[:64],
        address,
        failures,
        ctx.signin_limits.name_delay(failures),
    )


def _set_cookie(request: Request, response: Response, session_id: str) -> None:
    # Served over https (or behind a TLS proxy uvicorn trusts, X-Forwarded-Proto), the cookie is
    # Secure: without it a browser also sends it over plain http to the same host, where anyone
    # on the path reads the session. Over plain http (127.0.0.1) it could not be set at all.
    secure = request.url.scheme == "https"
    response.set_cookie(
        COOKIE, session_id, httponly=True, samesite="strict", path="/", secure=secure
    )
