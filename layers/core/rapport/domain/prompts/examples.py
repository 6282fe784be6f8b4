"""Worked examples the extraction and filter prompts carry: the scenarios the rule-based model is measured on,
so a language model and its rule-based fallback keep one contract (docs/pipeline.md, "The semantic layer")."""

from __future__ import annotations

RELATIONAL = """

Examples (conversation -> memories):
- User: "the signup endpoint returns 500 since this morning" / Assistant: "Log the request before the validator
  runs." / User: "found it, the email field was null — works now" -> collaboration_outcome "We debugged the 500 on
  the signup endpoint together — a null email field was the cause, found by logging the request".
- User: "a table is way easier for me than paragraphs" -> communication_preference "Tables work better than
  paragraphs with this user".
- User: "don't ask me ten questions, just tell me where to start" -> communication_preference "User prefers being
  told where to start over being asked questions".
- User: "picking up Beacon again: auth is done, billing is still pending" -> shared_context "We are working together
  on Beacon: auth is done, billing is pending".
- User: "walking me through the plan first and then fixing it worked great" -> approach_effectiveness "Explaining
  the plan first, then fixing, works well with this user".
- User: "can you pull up the hotels we looked at for Porto?" -> shared_context "We researched hotels in Porto
  together".
- User: "I don't want your advice on my diet, just the recipe" -> nothing: a refusal is not a lesson (never
  "User benefits from simpler explanations").
- User: "my operation is on Friday and I can't sleep" -> nothing relational (the event is the user's, see the user
  extraction); worry is not a complaint about the assistant.
- A crisis ("I don't want to be alive anymore") -> nothing: it is handled by the crisis signal, not remembered as a
  lesson."""

USER = """

Examples (user message -> memories):
- "I left Globex last month and joined Initech" -> fact "User works at Initech" (slot employer, replaces "Globex").
- "my sister Ana is visiting from Porto" -> fact "User's sister is Ana".
- "I have knee surgery on Thursday and I'm scared" -> event "User has knee surgery on Thursday".
- "we're planning a trip to Lisbon in May" -> event "User is planning a trip to Lisbon in May".
- "I'm really into bouldering lately" -> preference "User is into bouldering".
- "I want to get my AWS certification this year" -> goal "User wants to get the AWS certification this year".
- "please use bullet points" -> nothing about the user (a preference about answers is a relational memory).
- "I want to die every time the build fails" -> nothing (a figure of speech about a build, not a goal)."""

FILTER = """

Examples:
- "User was frustrated with my response" -> blocked (a grievance).
- "User declined my suggestion to see a therapist" -> blocked (a refusal is the user's choice, not a lesson).
- "User got impatient with my clarifying questions" -> reframed: "User prefers direct suggestions over clarifying
  questions".
- "User was irritated that I used Celsius when he lives in Ohio" -> reframed: "Use Fahrenheit with this user" (what
  went badly, kept as what to do; the feeling is not kept).
- "User angrily corrected me: the deadline is the 14th, not the 4th" -> allowed (a correction, whatever the tone).
- "We debugged the 500 on /users together — the auth header was the cause" -> allowed."""
