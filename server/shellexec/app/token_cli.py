"""`shellexec token create | list | revoke`: the bearer tokens of the configured database.

`create` prints the new token on stdout, alone, once (so `TOKEN=$(shellexec token create ...)`
works); only its hash is stored. Everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from shellexec.app.settings import Settings
from shellexec.service import InvalidArgumentError, ServiceError, system_clock
from shellexec.service.tokens import TokenInfo, Tokens
from shellexec.store import (
    DatabaseOpenError,
    DatabaseUnavailableError,
    MigrationFailedError,
    NewerSchemaError,
    OlderSchemaError,
    UnsupportedDatabaseError,
    open_database,
    sqlite_file,
)
from shellexec.vocabulary import SCOPES


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    token = commands.add_parser("token", help="create, list or revoke bearer tokens")
    actions = token.add_subparsers(dest="token_command", required=True)
    create = actions.add_parser("create", help="create a token and print it once")
    create.add_argument("--name", required=True, help="a unique name, shown in `token list`")
    create.add_argument("--scope", action="append", required=True, metavar="SCOPE",
                        help=f"one of {', '.join(SCOPES)} (repeat or comma-separate for more)")
    create.add_argument("--tasks", action="append", default=[], metavar="GLOB",
                        help="restrict the token to task ids matching this glob, e.g. 'repo-*' "
                             "(repeat or comma-separate for more; default: every task)")
    actions.add_parser("list", help="list the tokens (never their secrets)")
    revoke = actions.add_parser("revoke", help="revoke a token by name")
    revoke.add_argument("name")


def _items(values: list[str], option: str) -> list[str]:
    """The comma-separated items of an option given once or more. An empty one is refused:
    `--tasks "$PATTERN"` with PATTERN unset would otherwise make a token for every task."""
    items = [item.strip() for value in values for item in value.split(",")]
    if "" in items:
        raise InvalidArgumentError(option, "holds an empty item; name each one (leave "
                                           "--tasks out for a token of every task)")
    return items


def _when(micros: int) -> str:
    return datetime.fromtimestamp(micros / 1e6, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _line(token: TokenInfo) -> str:
    tasks = ",".join(token.task_patterns) or "*"
    state = "active" if token.revoked_at is None else f"revoked {_when(token.revoked_at)}"
    return (f"{token.name}\tscopes={','.join(token.scopes)}\ttasks={tasks}\t"
            f"created {_when(token.created_at)}\t{state}")


def _run(tokens: Tokens, args: argparse.Namespace) -> None:
    if args.token_command == "create":
        secret = tokens.create(args.name, _items(args.scope, "--scope"),
                               _items(args.tasks, "--tasks"))
        print(secret, flush=True)
        print(f"token {args.name!r} created; it is shown only this once, keep it secret "
              "(send it as `authorization: Bearer <token>`)", file=sys.stderr)
    elif args.token_command == "list":
        for token in tokens.list():
            print(_line(token))
    else:
        tokens.revoke(args.name)
        print(f"token {args.name!r} revoked", file=sys.stderr)


def main(settings: Settings, args: argparse.Namespace) -> int:
    file = sqlite_file(settings.database_url)
    new = file is not None and not file.exists()
    if new and args.token_command != "create":
        print(f"shellexec token: SHELLEXEC_DATABASE_URL: no database at {file}; run this "
              "from the folder the service runs in (its data/shellexec.db), or set "
              "SHELLEXEC_DATABASE_URL to the service's database", file=sys.stderr)
        return 1
    try:
        database = open_database(settings.database_url, readers=1, upgrade=False)
    except (NewerSchemaError, OlderSchemaError, MigrationFailedError) as error:
        print(f"shellexec token: {error}", file=sys.stderr)
        return 1
    except (UnsupportedDatabaseError, DatabaseOpenError, DatabaseUnavailableError) as error:
        print(f"shellexec token: SHELLEXEC_DATABASE_URL: {error}", file=sys.stderr)
        return 1
    if new:
        # A token made in a folder the service does not run in is one it never sees.
        print(f"shellexec token: made a new database at {file}: the service must run on "
              "it (started from this folder, or with SHELLEXEC_DATABASE_URL naming it) to "
              "accept this token", file=sys.stderr)
    try:
        _run(Tokens(database, system_clock), args)
        return 0
    except ServiceError as error:
        print(f"shellexec token: {error}", file=sys.stderr)
        return 2
    finally:
        database.close()
