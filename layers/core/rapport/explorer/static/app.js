// The memory explorer: one end user's memories, state, filter decisions and history, through the Rapport API.
import { Api, ApiError } from "./api.js";
import { badge, el, gauge, number, replace, when } from "./dom.js";

const KEY_ITEM = "rapport.explorer.key";
const BASE_ITEM = "rapport.explorer.base";
const STATE_POLL_MS = 10_000;
const RESTORABLE = new Set(["blocked", "reframed", "quarantined"]);

const $ = (id) => document.getElementById(id);
const view = { api: null, user: null, users: [], usersCursor: null, poll: null, cursors: {}, agent: "default" };

// The chosen assistant, as a query parameter of the calls about its part of the relationship (none for the default
// assistant: the calls a client that never names one makes).
function asAgent(query = {}) {
  return view.agent === "default" ? query : { ...query, agent_id: view.agent };
}

function showError(failure) {
  const box = $("error");
  const message = failure instanceof ApiError ? failure.message : String(failure && failure.message ? failure.message : failure);
  box.textContent = message;
  box.hidden = false;
}

function clearError() {
  $("error").hidden = true;
  $("error").textContent = "";
}

function say(text) {
  $("status").textContent = text;
}

// Runs one user action; its failure is shown as the API's message, never swallowed.
async function act(work) {
  clearError();
  try {
    return await work();
  } catch (failure) {
    showError(failure);
    return undefined;
  }
}

function connect(key, base) {
  sessionStorage.setItem(KEY_ITEM, key);
  sessionStorage.setItem(BASE_ITEM, base || "");
  view.api = new Api(base, key);
  $("api-key").value = key;
  $("api-base").value = base || "";
}

// A link may carry `#key=…&user=…&api=…`: the fragment never reaches a server, and it is cleared at once so the key
// stays out of the history and of any link copied from the address bar.
function readFragment() {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ""));
  if (!fragment.has("key") && !fragment.has("user") && !fragment.has("api")) return {};
  history.replaceState(null, "", location.pathname + location.search);
  return { key: fragment.get("key"), user: fragment.get("user"), base: fragment.get("api") };
}

// --- users ------------------------------------------------------------------------------------------------------

async function loadUsers(more = false) {
  const page = await view.api.call("GET", "/v1/users", { query: { limit: 50, cursor: more ? view.usersCursor : null } });
  view.users = more ? [...view.users, ...page.users] : page.users;
  view.usersCursor = page.next_cursor;
  $("users-more").hidden = !page.next_cursor;
  renderUsers();
}

function renderUsers() {
  const filter = $("user-filter").value.trim().toLowerCase();
  const shown = view.users.filter((u) => u.user_id.toLowerCase().includes(filter));
  replace(
    $("user-list"),
    shown.map((u) =>
      el(
        "li",
        {},
        el(
          "button",
          { type: "button", "data-user": u.user_id, "aria-current": u.user_id === view.user ? "true" : "false", onclick: () => openUser(u.user_id) },
          el("span", { class: "mono" }, u.user_id),
          el("span", { class: "meta" }, `${u.memory_count} memories · ${u.interaction_count} interactions · last seen ${when(u.last_seen)}`),
        ),
      ),
    ),
  );
  $("users-note").textContent = `${filter ? `${shown.length} of ` : ""}${view.users.length} user(s)${view.usersCursor ? ", more to load" : ""}`;
  if (!shown.length) $("user-list").append(el("li", { class: "hint" }, filter ? "No user matches." : "No users yet."));
}

// --- one person ---------------------------------------------------------------------------------------------------

async function openUser(userId) {
  clearError();
  // A person is shown only once the API has read them: a bad id leaves the page as it was, with the API's message.
  let state;
  try {
    state = await view.api.call("GET", `${view.api.user(userId)}/state`, { query: asAgent() });
  } catch (failure) {
    showError(failure);
    return;
  }
  view.user = userId;
  $("person-id").textContent = userId;
  $("person").hidden = false;
  $("memory").hidden = true;
  $("turn-result").hidden = true;
  replace($("hits"));
  $("search-note").textContent = "";
  $("erase-outcome").textContent = "";
  $("erase-confirm").value = "";
  renderUsers();
  renderState(state);
  clearInterval(view.poll);
  view.poll = setInterval(() => {
    if (document.visibilityState === "visible" && view.user === userId) refreshState().catch(showError);
  }, STATE_POLL_MS);
  await act(() => Promise.all([loadDecisions(), loadHistory(), loadPeople()]));
  say(`Opened ${userId}`);
  $("person").focus();
}

async function refreshState() {
  const state = await view.api.call("GET", `${view.api.user(view.user)}/state`, { query: asAgent() });
  renderState(state);
  return state;
}

function renderState(state) {
  replace(
    $("gauges"),
    gauge("trust", state.trust, { label: "Trust" }),
    gauge("sentiment", state.sentiment, { label: "Sentiment", centre: 0.5 }),
    gauge("grudge", state.grudge, { label: "Grudge" }),
    gauge("familiarity", state.familiarity, { label: "Familiarity" }),
  );
  const profile = state.profile;
  const facts = [
    ["Relation bias", number(state.relation_bias, 4), "relation_bias", state.relation_bias],
    ["Tone modifier", state.tone_grudge_modifier ?? "none", "tone", state.tone_grudge_modifier ?? ""],
    ["Crisis open", state.crisis_open ? "yes" : "no", "crisis", String(state.crisis_open)],
    ["Known since", when(profile && profile.known_since), "known_since", ""],
    ["Last seen", when(profile && profile.last_seen), "last_seen", ""],
    ["Interactions", profile ? profile.interaction_count : 0, "interaction_count", profile ? profile.interaction_count : 0],
    ["Plan", profile ? profile.plan_tier : "—", "plan", ""],
  ];
  replace($("state-facts"), facts.flatMap(([name, text, key, raw]) => [el("dt", {}, name), el("dd", { "data-fact": key, "data-value": raw }, text)]));
  $("state-as-of").textContent = `As of ${when(state.as_of)}.`;
}

// --- search -------------------------------------------------------------------------------------------------------

function provenance(memory) {
  const source = memory.source || {};
  const parts = [`trust: ${memory.trust}`, `source: ${source.kind || "unknown"}`];
  if (source.speaker) parts.push(`speaker: ${source.speaker}`);
  if (source.interaction_id) parts.push(`interaction ${source.interaction_id}`);
  if (source.channel) parts.push(`channel ${source.channel}`);
  return parts.join(" · ");
}

function memoryCard(memory) {
  const hit = typeof memory.score === "number";
  return el(
    "li",
    { class: "card", "data-memory": memory.id },
    el("p", { class: "content" }, memory.content),
    el(
      "div",
      { class: "badges" },
      badge(memory.domain, "domain"),
      badge(memory.type, "type"),
      memory.status !== "active" ? badge(memory.status) : null,
      hit ? el("span", { class: `badge ${memory.match_strength}`, "data-label": memory.match_strength }, memory.match_strength) : null,
    ),
    hit
      ? el(
          "p",
          { class: "numbers" },
          "similarity ",
          el("span", { "data-similarity": memory.similarity }, number(memory.similarity, 3)),
          " · score ",
          el("span", { "data-score": memory.score }, number(memory.score, 3)),
        )
      : el("p", { class: "numbers" }, `strength ${number(memory.strength)} · importance ${number(memory.importance)} · ${when(memory.created_at)}`),
    hit && memory.match_reasons.length ? el("ul", { class: "reasons", "aria-label": "Why it matched" }, memory.match_reasons.map((r) => el("li", {}, r))) : null,
    el("p", { class: "hint" }, provenance(memory)),
    el("button", { type: "button", class: "link", onclick: () => act(() => openMemory(memory.id)) }, "Links and details"),
  );
}

async function search(event) {
  event.preventDefault();
  const query = $("query").value.trim();
  const options = { domain: $("domain").value, include_archived: $("include-archived").checked ? "true" : null };
  await act(async () => {
    const page = await view.api.call("GET", `${view.api.user(view.user)}/memories`, {
      query: asAgent(query ? { ...options, query, limit: 20 } : { ...options, limit: 50 }),
    });
    replace($("hits"), page.memories.map(memoryCard));
    $("search-note").textContent = query
      ? `${page.memories.length} hit(s) of ${page.total_stored} stored`
      : `${page.memories.length} newest of ${page.total_stored} stored${page.next_cursor ? " (more exist)" : ""}`;
  });
}

// --- one memory and its edges ---------------------------------------------------------------------------------------

async function openMemory(memoryId) {
  const base = view.api.user(view.user);
  const [memory, listed] = await Promise.all([
    view.api.call("GET", `${base}/memories/${encodeURIComponent(memoryId)}`, { query: asAgent() }),
    view.api.call("GET", `${base}/memories/${encodeURIComponent(memoryId)}/associations`),
  ]);
  const edges = listed.associations.map((edge) => {
    const neighbour = edge.direction === "outgoing" ? edge.target_id : edge.source_id;
    // A provenance edge points at the interaction a memory came from, which is history, not a memory.
    const toInteraction = edge.relation === "DERIVED_FROM" && edge.direction === "outgoing";
    return el(
      "li",
      { "data-edge": edge.relation },
      `${edge.direction === "outgoing" ? "→" : "←"} ${edge.relation} (strength ${number(edge.strength)}${edge.enrichment ? ", enrichment" : ""}) `,
      toInteraction
        ? el("span", { class: "mono" }, `interaction ${neighbour}`)
        : el("button", { type: "button", class: "link", "data-neighbour": neighbour, onclick: () => act(() => openMemory(neighbour)) }, neighbour),
    );
  });
  labelNeighbours(edges.flatMap((item) => [...item.querySelectorAll("[data-neighbour]")]));
  replace(
    $("memory-body"),
    el("p", { class: "content" }, memory.content),
    el("div", { class: "badges" }, badge(memory.domain, "domain"), badge(memory.type, "type"), badge(memory.status), badge(memory.tier, "tier")),
    el("p", { class: "numbers" }, `strength ${number(memory.strength)} · importance ${number(memory.importance)} · confidence ${number(memory.confidence)}`),
    el("p", { class: "hint" }, provenance(memory), ` · created ${when(memory.created_at)}`),
    memory.in_reply_to ? el("p", { class: "hint" }, `In reply to: ${memory.in_reply_to.content || ""}`) : null,
    el("h4", {}, "History"),
    el("ol", { id: "memory-history" }, memoryHistory(memory, listed.associations)),
    el("h4", {}, `Links (${edges.length})`),
    edges.length ? el("ul", { id: "edges" }, edges) : el("p", { class: "hint" }, "No links."),
  );
  $("memory").hidden = false;
  $("memory").scrollIntoView({ block: "start" });
}

// What happened to a memory, oldest first: when it was stored, each time it was seen again (reinforced), and what
// invalidated, replaced, consolidated or archived it, from its own fields and its lifecycle links.
const LIFECYCLE = {
  REINFORCES: "reinforced by",
  INVALIDATED_BY: "invalidated by",
  EVOLVED_INTO: "evolved into",
  PART_OF: "consolidated into",
  DERIVED_FROM: "derived from",
  CONTRADICTS: "contradicted by",
};
function memoryHistory(memory, associations) {
  const entries = [["stored", memory.created_at]];
  if (memory.occurred_at && memory.occurred_at !== memory.created_at) entries.unshift(["happened", memory.occurred_at]);
  if (Date.parse(memory.last_reinforced_at) - Date.parse(memory.created_at) > 1000) {
    entries.push(["last reinforced", memory.last_reinforced_at]);
  }
  for (const edge of associations) {
    const what = LIFECYCLE[edge.relation];
    if (!what || (edge.relation === "DERIVED_FROM" && edge.direction !== "outgoing")) continue;
    const other = edge.direction === "outgoing" ? edge.target_id : edge.source_id;
    entries.push([`${what} ${other}`, edge.timestamp || null]);
  }
  if (memory.status !== "active") entries.push([`now ${memory.status}`, memory.updated_at]);
  return entries.map(([what, at]) => el("li", { "data-history": what.split(" ")[0] }, at ? `${when(at)} — ${what}` : what));
}

// Each neighbour is named by its content, read in the background; one that cannot be read keeps its id.
const NEIGHBOURS_NAMED = 25;
function labelNeighbours(buttons) {
  const base = view.api.user(view.user);
  for (const button of buttons.slice(0, NEIGHBOURS_NAMED)) {
    const id = button.dataset.neighbour;
    view.api
      .call("GET", `${base}/memories/${encodeURIComponent(id)}`)
      .then((memory) => {
        button.textContent = memory.content;
        button.title = id;
      })
      .catch(() => undefined);
  }
}

// --- filter decisions ---------------------------------------------------------------------------------------------

async function loadDecisions(more = false) {
  const page = await view.api.call("GET", `${view.api.user(view.user)}/filter-decisions`, {
    query: asAgent({ limit: 20, verdict: $("verdict").value, cursor: more ? view.cursors.decisions : null }),
  });
  view.cursors.decisions = page.next_cursor;
  $("decisions-more").hidden = !page.next_cursor;
  const cards = page.decisions.map(decisionCard);
  if (more) $("decisions").append(...cards);
  else replace($("decisions"), cards.length ? cards : [el("li", { class: "hint" }, "No decisions.")]);
}

function decisionCard(decision) {
  const restorable = RESTORABLE.has(decision.verdict) && !decision.restored_at;
  return el(
    "li",
    { class: "card", "data-decision": decision.id, "data-verdict": decision.verdict },
    el("div", { class: "badges" }, badge(decision.verdict), badge(decision.domain, "domain"), badge(decision.type, "type")),
    el("p", { class: "content" }, decision.original),
    decision.content && decision.content !== decision.original ? el("p", {}, `Stored as: ${decision.content}`) : null,
    el("p", { class: "reason" }, `Why: ${decision.reason}`),
    el("p", { class: "hint" }, `decided by ${decision.decided_by}${decision.fallback_reason ? ` (${decision.fallback_reason})` : ""} · ${when(decision.decided_at)}`),
    decision.restored_at ? el("p", { class: "restored" }, `Restored ${when(decision.restored_at)} as memory ${decision.restored_memory_id}`) : null,
    restorable ? el("button", { type: "button", "data-restore": decision.id, onclick: () => restore(decision.id) }, "Restore") : null,
  );
}

async function restore(decisionId) {
  await act(async () => {
    const restored = await view.api.call("POST", `${view.api.user(view.user)}/filter-decisions/${encodeURIComponent(decisionId)}/restore`, { query: asAgent() });
    say(`Restored: memory ${restored.memory.id} is stored`);
    await loadDecisions();
  });
}

// --- history and people -------------------------------------------------------------------------------------------

async function loadHistory(more = false) {
  const page = await view.api.call("GET", `${view.api.user(view.user)}/history`, {
    query: { limit: 10, cursor: more ? view.cursors.history : null },
  });
  view.cursors.history = page.next_cursor;
  $("history-more").hidden = !page.next_cursor;
  const cards = page.interactions.map((i) =>
    el(
      "li",
      { class: "card", "data-interaction": i.id },
      el("p", { class: "hint" }, `${when(i.occurred_at)}${i.channel ? ` · ${i.channel}` : ""} · ${i.memory_ids.length} memories`),
      el("ul", { class: "messages" }, i.messages.map((m) => el("li", {}, el("strong", {}, `${m.role}: `), m.content))),
    ),
  );
  if (more) $("history").append(...cards);
  else replace($("history"), cards.length ? cards : [el("li", { class: "hint" }, "No interactions.")]);
}

async function loadPeople(more = false) {
  const page = await view.api.call("GET", `${view.api.user(view.user)}/people`, {
    query: { limit: 50, cursor: more ? view.cursors.people : null },
  });
  view.cursors.people = page.next_cursor;
  $("people-more").hidden = !page.next_cursor;
  const cards = page.people.map((p) =>
    el(
      "li",
      { class: "card", "data-person": p.slug },
      el("p", { class: "content" }, p.name, p.role ? ` (${p.role})` : ""),
      el("p", { class: "hint" }, `${p.sentiment_label} (${number(p.sentiment)}) · mentioned ${p.mention_count} time(s) · last ${when(p.last_mentioned)}`),
      p.facts.length ? el("ul", {}, p.facts.map((f) => el("li", {}, f.text))) : null,
    ),
  );
  if (more) $("people").append(...cards);
  else replace($("people"), cards.length ? cards : [el("li", { class: "hint" }, "No people mentioned.")]);
}

// --- try a turn ---------------------------------------------------------------------------------------------------

async function previewTurn(event) {
  event.preventDefault();
  await act(async () => {
    // Processing the message already moves the state (the message is read for its signals): the change shown
    // after the reply is measured from before it.
    view.beforeTurn = await refreshState();
    const asked = { user_id: view.user, message: $("turn-message").value };
    const answer = await view.api.call("POST", "/v1/process", { body: view.agent === "default" ? asked : { ...asked, agent_id: view.agent } });
    view.turn = answer;
    $("turn-prompt").textContent = answer.context.system_prompt;
    const item = (m) => el("li", {}, m.text, el("span", { class: "hint" }, ` (similarity ${number(m.similarity)})`));
    replace($("turn-memories"), answer.memory.relevant_memories.length ? answer.memory.relevant_memories.map(item) : [el("li", { class: "hint" }, "none")]);
    replace($("turn-notes"), answer.memory.relational_notes.length ? answer.memory.relational_notes.map(item) : [el("li", { class: "hint" }, "none")]);
    $("turn-result").hidden = false;
    $("reply").hidden = answer.turn_status !== "awaiting_reply";
    $("turn-outcome").textContent = answer.reply ? `The server's model replied: ${answer.reply}` : `Turn ${answer.turn_id} awaits a reply.`;
    await refreshState();
  });
}

async function sendReply(event) {
  event.preventDefault();
  const turn = view.turn;
  if (!turn) return;
  await act(async () => {
    const before = view.beforeTurn || (await refreshState());
    const recorded = await view.api.call("POST", `/v1/turns/${encodeURIComponent(turn.turn_id)}/reply`, {
      body: { user_id: view.user, reply: $("turn-reply").value },
    });
    const after = await refreshState();
    const moved = ["trust", "sentiment", "grudge", "familiarity"]
      .map((name) => `${name} ${number(before[name], 3)} → ${number(after[name], 3)}`)
      .join(", ");
    $("turn-outcome").textContent = `Recorded as interaction ${recorded.interaction.id}. ${moved}`;
    $("reply").hidden = true;
    await Promise.all([loadHistory(), loadDecisions(), loadPeople()]);
  });
}

// --- erase --------------------------------------------------------------------------------------------------------

async function erase(event) {
  event.preventDefault();
  if ($("erase-confirm").value !== view.user) {
    showError(`type ${view.user} exactly to erase this person`);
    return;
  }
  await act(async () => {
    const erased = await view.api.call("DELETE", `/v1/privacy/erase/${encodeURIComponent(view.user)}`);
    const counts = Object.entries(erased.counts).map(([kind, n]) => `${n} ${kind}`).join(", ");
    $("erase-outcome").replaceChildren(
      `Erased ${erased.user_id} (${counts || "nothing stored"}). Audit event `,
      el("span", { class: "mono", id: "audit-event" }, erased.audit_event_id),
    );
    await Promise.all([refreshState(), loadDecisions(), loadHistory(), loadPeople()]);
    replace($("hits"));
    await loadUsers().catch(() => undefined);
  });
}

// --- wiring -------------------------------------------------------------------------------------------------------

async function start(user) {
  await act(async () => {
    try {
      await loadUsers();
    } catch (failure) {
      // A server without the listing still lets a person be opened by id.
      if (!(failure instanceof ApiError) || (failure.status !== 404 && failure.status !== 405)) throw failure;
      $("users-note").textContent = "This server does not list users: open one by id.";
    }
    await loadAgents();
    say("Connected");
  });
  if (user) await openUser(user);
}

async function loadAgents() {
  let listed;
  try {
    listed = await view.api.call("GET", "/v1/agents");
  } catch (failure) {
    // A server without assistants has the default one only.
    if (!(failure instanceof ApiError) || (failure.status !== 404 && failure.status !== 405)) throw failure;
    listed = { agents: [{ agent_id: "default", people: 0 }] };
  }
  const option = (agent) => el("option", { value: agent.agent_id }, agent.default || agent.agent_id === "default" ? "default" : `${agent.agent_id} (${agent.people} people)`);
  replace($("agent"), listed.agents.map(option));
  if (!listed.agents.some((agent) => agent.agent_id === view.agent)) view.agent = "default";
  $("agent").value = view.agent;
}

async function switchAgent() {
  view.agent = $("agent").value || "default";
  if (!view.user) return;
  replace($("hits"));
  $("search-note").textContent = "";
  $("memory").hidden = true;
  $("turn-result").hidden = true;
  await act(async () => {
    await Promise.all([refreshState(), loadDecisions()]);
    say(`Showing ${view.user} as the ${view.agent} assistant sees them`);
  });
}

function wire() {
  $("connect").addEventListener("submit", (event) => {
    event.preventDefault();
    connect($("api-key").value.trim(), $("api-base").value.trim());
    start(view.user || $("user-id").value.trim() || null);
  });
  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY_ITEM);
    view.api = null;
    $("api-key").value = "";
    say("Key forgotten");
  });
  $("open-user").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!view.api) return showError("enter the API key first");
    openUser($("user-id").value.trim());
  });
  $("user-filter").addEventListener("input", renderUsers);
  $("users-more").addEventListener("click", () => act(() => loadUsers(true)));
  $("search").addEventListener("submit", search);
  $("verdict").addEventListener("change", () => act(() => loadDecisions()));
  $("agent").addEventListener("change", switchAgent);
  $("decisions-more").addEventListener("click", () => act(() => loadDecisions(true)));
  $("history-more").addEventListener("click", () => act(() => loadHistory(true)));
  $("people-more").addEventListener("click", () => act(() => loadPeople(true)));
  $("turn").addEventListener("submit", previewTurn);
  $("reply").addEventListener("submit", sendReply);
  $("erase").addEventListener("submit", erase);

  // A link pasted into an open tab changes only the fragment: it is read the same way as on load.
  window.addEventListener("hashchange", () => {
    if (location.hash.length > 1) follow(readFragment());
  });
  follow(readFragment());
}

function follow(linked) {
  const key = linked.key || sessionStorage.getItem(KEY_ITEM);
  const base = linked.base ?? sessionStorage.getItem(BASE_ITEM) ?? "";
  if (key) {
    connect(key, base);
    start(linked.user);
  } else {
    if (linked.user) $("user-id").value = linked.user;
    say("Enter an API key to begin");
    $("api-key").focus();
  }
}

wire();
