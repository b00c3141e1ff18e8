// The seat-map page: plain JavaScript against the service's JSON API (see /openapi.json).
// ?event=N shows an event, ?user=NAME books as that user.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  event: null,         // {id, name, seats, available}
  letters: "",         // one per seat: a(vailable), h(eld), c(onfirmed)
  selected: new Set(), // seat numbers picked, not yet held
  reservation: null,   // the last reservation made here
  refreshTimer: null,
  countdownTimer: null,
};

// What a refusal means to a person, by the API's error code.
const EXPLAIN = {
  lock_busy: () => "Someone is booking this seat right now. Try again in a moment.",
  seat_taken: (m) => "Already taken: someone else got there first (" + m + "). Pick another seat.",
  stale_fence: () => "Already taken: someone else booked this seat a moment ago.",
  invalid_state: (m) => "This reservation can no longer be changed (" + m + ").",
  conflict: () => "Your booking clashed with another one. Please try again.",
  not_found: (m) => "Not found: " + m + ".",
  unavailable: () => "The service cannot reach its database or lock server. Try again shortly.",
  idempotency_mismatch: (m) => "This request was already used differently: " + m + ".",
  bad_request: (m) => m,
};

function say(text, kind, code) {
  const box = $("message");
  box.textContent = text;
  box.className = kind || "";
  box.dataset.code = code || "";
}

// fetch + JSON; a refusal comes back as {status, error, message}.
async function api(method, path, body, headers) {
  const init = { method, headers: Object.assign({}, headers || {}) };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    return { ok: false, status: 0, error: "unavailable", message: String(e) };
  }
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (response.ok) return { ok: true, status: response.status, data };
  return { ok: false, status: response.status, error: data && data.error,
           message: (data && data.message) || response.statusText };
}

function explain(failure) {
  const how = EXPLAIN[failure.error];
  return how ? how(failure.message) : "Error " + failure.status + ": " + failure.message;
}

function mySeats() {
  const r = state.reservation;
  return r && r.status === "held" ? new Set(r.seats) : new Set();
}

function renderSeats() {
  const grid = $("seats");
  const mine = mySeats();
  grid.textContent = "";
  for (let i = 0; i < state.letters.length; i++) {
    const seat = i + 1;
    const letter = state.letters[i];
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = String(seat);
    b.dataset.seat = String(seat);
    let kind = letter === "a" ? "available" : letter === "c" ? "confirmed" : "held";
    if (letter === "h" && mine.has(seat)) kind = "mine";
    if (letter === "a" && state.selected.has(seat)) kind = "selected";
    b.className = "seat " + kind;
    b.dataset.status = kind;
    b.disabled = letter !== "a";
    b.setAttribute("aria-pressed", String(state.selected.has(seat)));
    b.title = "Seat " + seat + ": " + kind;
    b.addEventListener("click", () => toggle(seat));
    grid.appendChild(b);
  }
  $("hold").disabled = state.selected.size === 0;
  $("hold").textContent = state.selected.size > 1
    ? "Hold " + state.selected.size + " seats" : "Hold selected seat";
}

function toggle(seat) {
  if (state.selected.has(seat)) state.selected.delete(seat); else state.selected.add(seat);
  renderSeats();
}

async function refresh() {
  if (!state.event) return;
  const id = state.event.id;
  const [event, map] = await Promise.all([
    api("GET", "/events/" + id),
    api("GET", "/events/" + id + "/seatmap?from=1&count=" + Math.min(state.event.seats, 2000)),
  ]);
  if (!event.ok || !map.ok) {
    say(explain(event.ok ? map : event), "error", (event.ok ? map : event).error);
    return;
  }
  state.event = event.data;
  state.letters = map.data.seats;
  for (const seat of [...state.selected]) {
    if (state.letters[seat - 1] !== "a") state.selected.delete(seat);
  }
  $("event-title").textContent = event.data.name + " (event " + event.data.id + ")";
  $("event-summary").textContent = event.data.available + " of " + event.data.seats +
    " seats free" + (event.data.seats > 2000 ? " (the first 2000 are shown)" : "");
  renderSeats();
}

async function showEvent(id) {
  const r = await api("GET", "/events/" + id);
  if (!r.ok) { say(explain(r), "error", r.error); return; }
  state.event = r.data;
  state.selected.clear();
  $("event-id").value = String(id);
  const url = new URL(location.href);
  url.searchParams.set("event", String(id));
  history.replaceState(null, "", url);
  await refresh();
  clearInterval(state.refreshTimer);
  state.refreshTimer = setInterval(refresh, 2000);
}

async function hold() {
  const user = $("user").value.trim();
  if (!user) { say("Enter your name first.", "error", "bad_request"); return; }
  const seats = [...state.selected].sort((a, b) => a - b);
  $("hold").disabled = true;
  say("Holding seat" + (seats.length > 1 ? "s " : " ") + seats.join(", ") + "…", "", "pending");
  // One key per click: a retry of this very request (network hiccup) books nothing twice.
  const key = "page-" + Date.now() + "-" + Math.random().toString(16).slice(2);
  const r = await api("POST", "/events/" + state.event.id + "/reservations",
                      { user, seats }, { "Idempotency-Key": key });
  state.selected.clear();
  if (r.ok) {
    state.reservation = r.data;
    say("Held for you: seat" + (seats.length > 1 ? "s " : " ") + seats.join(", ") +
        ". Confirm within 15 minutes.", "ok", "held");
    showReservation();
  } else {
    say(explain(r), "error", r.error);
  }
  await refresh();
}

async function change(action) {
  const r = await api("POST", "/reservations/" + state.reservation.id + "/" + action);
  if (r.ok) {
    state.reservation = r.data;
    say(action === "confirm" ? "Confirmed: the seats are yours." : "Cancelled: the seats are free again.",
        "ok", r.data.status);
  } else {
    say(explain(r), "error", r.error);
  }
  showReservation();
  await refresh();
}

function showReservation() {
  const r = state.reservation;
  $("reservation").hidden = !r;
  if (!r) return;
  $("reservation-id").textContent = "#" + r.id;
  $("reservation-seats").textContent = r.seats.join(", ");
  $("reservation-status").textContent = r.status;
  $("reservation").dataset.status = r.status;
  const held = r.status === "held";
  $("confirm").disabled = !held;
  $("cancel").disabled = !(held || r.status === "confirmed");
  $("countdown-line").hidden = !held;
  clearInterval(state.countdownTimer);
  if (held) {
    tick();
    state.countdownTimer = setInterval(tick, 1000);
  }
}

// The 15-minute hold, counted down from the server's expiry time.
function tick() {
  const left = Math.max(0, Date.parse(state.reservation.hold_expires_at) - Date.now());
  const s = Math.floor(left / 1000);
  $("countdown").textContent = Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  if (left === 0) {
    clearInterval(state.countdownTimer);
    api("GET", "/reservations/" + state.reservation.id).then((r) => {
      if (r.ok) state.reservation = r.data;
      say("Your hold has expired: the seats are free again.", "error", "expired");
      showReservation();
      refresh();
    });
  }
}

async function createEvent(e) {
  e.preventDefault();
  const r = await api("POST", "/events", { name: $("create-name").value,
                                           seats: Number($("create-seats").value) });
  if (!r.ok) { say(explain(r), "error", r.error); return; }
  say("Created event " + r.data.id + ".", "ok", "created");
  await showEvent(r.data.id);
}

function init() {
  const params = new URLSearchParams(location.search);
  $("user").value = params.get("user") || "guest-" + Math.random().toString(16).slice(2, 6);
  $("event-form").addEventListener("submit", (e) => {
    e.preventDefault();
    showEvent(Number($("event-id").value));
  });
  $("create-form").addEventListener("submit", createEvent);
  $("hold").addEventListener("click", hold);
  $("confirm").addEventListener("click", () => change("confirm"));
  $("cancel").addEventListener("click", () => change("cancel"));
  if (params.get("event")) showEvent(Number(params.get("event")));
  document.body.dataset.ready = "true";
}

init();
