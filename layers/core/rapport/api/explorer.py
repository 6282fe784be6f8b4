"""The memory explorer from the API function: the same file table as the local server, on the API's own origin.

In AWS the page and the API share `https://<host>/<stage>`, so the page calls the API without CORS; these routes sit
outside the schema (they are files, not API operations) and outside the authorizer (they hold no data).
"""

from __future__ import annotations

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response

from rapport.explorer.site import EXPLORER_PREFIX, StaticSite


def register_explorer_routes(app: APIGatewayRestResolver, site: StaticSite | None = None) -> None:
    files = site or StaticSite()

    @app.get(EXPLORER_PREFIX, include_in_schema=False)
    def explorer_folder() -> Response[str]:
        # The resolver matches `/explorer/` to this route too (it ignores a trailing slash): the path the browser
        # asked for tells them apart, so the page never redirects to itself.
        if (app.current_event.request_context.path or "").endswith("/"):
            return _answer(app, files, EXPLORER_PREFIX + "/")
        # Relative, so the stage (or a custom domain's base path) in front of `/explorer` is kept; to the file by
        # name, a path only the `{proxy+}` resource matches.
        page = EXPLORER_PREFIX.rsplit("/", 1)[-1] + "/index.html"
        return Response(308, "text/plain", "", headers={"Location": page})

    @app.get(EXPLORER_PREFIX + "/<name>", include_in_schema=False)
    def explorer_file(name: str) -> Response[str]:
        return _answer(app, files, f"{EXPLORER_PREFIX}/{name}")


def _answer(app: APIGatewayRestResolver, files: StaticSite, path: str) -> Response[str]:
    event = app.current_event
    answer = files.answer(event.http_method, path, event.headers.get("if-none-match"))
    headers = {name: value for name, value in answer.headers.items() if name != "content-type"}
    return Response(answer.status, answer.headers["content-type"], answer.body, headers=headers)
