"""The seed's request mix, defined once: vu_load (Python, closed loop or paced users) and
latch_httpload (C++, open loop) both take their shares and request templates from here;
write_scenario() gives the C++ tool the same definition as a file (bench/loadgen/http_scenario.h
reads it). The decisions themselves (read, else settle an own hold, else book a seat of the
last page) are vu_load's, ported as they are to SeedScenario::Next."""

MIX = {
    "read_share": 0.8,        # reads among all requests (the seed: 80 % reads / 20 % writes)
    "event_read_share": 0.5,  # GET event among reads; the rest a page of available seats
    "page_limit": 100,        # seats per page
    "confirm_share": 0.5,     # an own hold settled: confirmed, else cancelled
    "keep_hold_share": 0.5,   # holds kept to settle later (the others stay until they expire)
}

# kind -> (method, path, body, extra header); placeholders {event} {after} {limit} {seat}
# {id} {user} {n} {tag} (fill() below; the C++ side replaces the same names).
REQUESTS = {
    "read_event": ("GET", "/events/{event}", "", ""),
    "read_seats": ("GET", "/events/{event}/seats?after={after}&limit={limit}", "", ""),
    "reserve": ("POST", "/events/{event}/reservations",
                '{"user": "vu{user}", "seats": [{seat}]}', "Idempotency-Key: {tag}-{user}-{n}"),
    "confirm": ("POST", "/reservations/{id}/confirm", "", ""),
    "cancel": ("POST", "/reservations/{id}/cancel", "", ""),
}


def fill(template, **values):
    """Replaces {name} by values[name] (only those names: JSON braces stay)."""
    for k, v in values.items():
        template = template.replace("{%s}" % k, str(v))
    return template


def write_scenario(path, users, event, seats, tag):
    lines = ["# the seed's mix (bench/demoload/mix.py) for latch_httpload",
             "users %d" % users, "event %d" % event, "seats %d" % seats, "tag %s" % tag]
    lines += ["%s %s" % (k, v) for k, v in MIX.items()]
    for kind, (method, p, body, header) in REQUESTS.items():
        lines.append("request %s %s %s" % (kind, method, p))
        if body:
            lines.append("body %s %s" % (kind, body))
        if header:
            lines.append("header %s %s" % (kind, header))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
