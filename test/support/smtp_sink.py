"""A real SMTP server for gex's e-mail tests (aiosmtpd): stores each message it accepts as files.

Usage: python3 smtp_sink.py --dir FOLDER [--user U --password P] [--cert C --key K]
                            [--require-starttls] [--implicit-tls]

Listens on 127.0.0.1, a free port, and prints "listening PORT" once it does. Each accepted message
is FOLDER/N.eml (the bytes as received) and FOLDER/N.json (envelope, headers, decoded subject and
body, the login and whether the session was over TLS), written whole before the 250 reply. A
recipient whose local part is failNNN (fail550@example.com) is refused with reply NNN. With --user
and --password AUTH (PLAIN, LOGIN) is required; with --cert and --key STARTTLS is offered (and
required with --require-starttls), or TLS is spoken from the start with --implicit-tls. Exits when
its standard input closes, so it never outlives the test that started it.
"""

import argparse
import asyncio
import email
import email.policy
import json
import os
import re
import ssl
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

FAIL = re.compile(r"^fail([45]\d\d)@", re.IGNORECASE)


class Sink:
    def __init__(self, folder):
        self.folder = folder
        self.count = 0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        match = FAIL.match(address)
        if match:
            code = match.group(1)
            return f"{code} {code[0]}.0.0 injected failure for this recipient"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        raw = envelope.original_content or envelope.content
        parsed = email.message_from_bytes(raw, policy=email.policy.default)
        body = parsed.get_body(preferencelist=("plain",))
        login = session.login_data.decode() if isinstance(session.login_data, bytes) else None
        facts = {
            "mailFrom": envelope.mail_from,
            "rcptTos": envelope.rcpt_tos,
            "subject": str(parsed["subject"]),
            "headers": [[key, str(value)] for key, value in parsed.items()],
            "contentTypes": [part.get_content_type() for part in parsed.walk()],
            "text": body.get_content().replace("\r\n", "\n") if body is not None else None,
            "login": login,
            "tls": session.ssl is not None or server.transport.get_extra_info("sslcontext") is not None,
        }
        base = os.path.join(self.folder, str(self.count))
        with open(base + ".eml.tmp", "wb") as out:
            out.write(raw)
        with open(base + ".json.tmp", "w") as out:
            json.dump(facts, out)
        os.rename(base + ".eml.tmp", base + ".eml")
        os.rename(base + ".json.tmp", base + ".json")
        return f"250 2.0.0 OK queued as {self.count}"


def authenticator(user, password):
    def check(server, session, envelope, mechanism, auth_data):
        ok = (
            isinstance(auth_data, LoginPassword)
            and auth_data.login == user.encode()
            and auth_data.password == password.encode()
        )
        # handled=False: aiosmtpd answers a failure itself (535)
        return AuthResult(success=ok, handled=False, auth_data=auth_data)

    return check


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--require-starttls", action="store_true")
    parser.add_argument("--implicit-tls", action="store_true")
    args = parser.parse_args()

    context = None
    if args.cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.cert, args.key)
    handler = Sink(args.dir)
    options = {"hostname": "sink.test", "ident": "gex test sink"}
    if args.user:
        options.update(
            authenticator=authenticator(args.user, args.password),
            auth_required=True,
            # over plain text only where no TLS is offered (a loopback relay); implicit TLS is TLS already
            auth_require_tls=context is not None and not args.implicit_tls,
        )
    if context is not None and not args.implicit_tls:
        options.update(tls_context=context, require_starttls=args.require_starttls)

    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(handler, **options),
        host="127.0.0.1",
        port=0,
        ssl=context if args.implicit_tls else None,
    )
    port = server.sockets[0].getsockname()[1]
    print(f"listening {port}", flush=True)

    stdin_closed = asyncio.Event()
    loop.add_reader(sys.stdin.fileno(), lambda: sys.stdin.buffer.read1(4096) or stdin_closed.set())
    await stdin_closed.wait()
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
