"""The rule data of the quarantine: what reads as instructions to the assistant rather than something about the person.

Data, not code: `rapport.domain.quarantine` applies these tables and nothing else decides. Patterns are regular
expressions matched against normalised text (`quarantine.normalised`: NFKC, lower case, straight apostrophes, ASCII
angle brackets, no zero-width characters, one space between words, line breaks kept), so `^` and `$` are line
boundaries. A rule names what the text does to the assistant, never a sentence from a test: a person's own
imperatives ("remember to buy milk", "you must try the ramen") are not about the assistant and must stay ordinary.
"""

from __future__ import annotations

from enum import StrEnum


class Family(StrEnum):
    OVERRIDE = "override"  # tries to replace or drop the assistant's own instructions
    ADDRESSED = "addressed"  # an order given to the assistant, the system or the model by name
    SPOOF = "spoof"  # poses as a role, a section or a chat-template token of the prompt
    TAG = "tag"  # a tag that could open or close a block of the prompt
    EXFILTRATION = "exfiltration"  # asks for data to leave through a tool, a link or an address
    PLANTING = "planting"  # a standing rule for later turns, to be remembered as one
    PRIVILEGE = "privilege"  # claims authority over the assistant


REASONS: dict[Family, str] = {
    Family.OVERRIDE: "tries to override or drop the assistant's instructions",
    Family.ADDRESSED: "gives orders to the assistant, the system or the model",
    Family.SPOOF: "poses as a role, a section or a token of the assistant's prompt",
    Family.TAG: "contains a tag that could open or close a block of the prompt",
    Family.EXFILTRATION: "asks for data to be sent out through a tool, a link or an address",
    Family.PLANTING: "plants a standing rule for the assistant to follow later",
    Family.PRIVILEGE: "claims authority over the assistant",
}

# Who the assistant is called when someone gives it orders.
_ASSISTANT = r"(?:assistant|ai|a\.i\.|chatbot|chat bot|bot|gpt|chatgpt|llm|language model|ai model|claude|copilot)"
_ADDRESSEE = rf"(?:{_ASSISTANT}|system|model)"
# What the assistant's own rules are called.
_RULES = (
    r"(?:instructions?|directions?|directives?|rules?|prompts?|guidelines?|guardrails?|polic(?:y|ies)|programming|"
    r"restrictions?|constraints?|limitations?|limits|filters?|checks?|moderation|safeguards?|protocols?|training|"
    r"system (?:prompt|message)|isolation|access controls?)"
)
# Whose rules: the assistant's, the system's, or the earlier ones of the prompt. A bare "the" is not enough:
# "ignore the noise", "skip the warm-up".
_WHOSE = (
    r"(?:all|any|every|previous|prior|above|earlier|preceding|original|initial|existing|default|current|your|its|"
    r"the system'?s?|the assistant'?s?|the ai'?s?|system|safety|content|security|ethical|these|those|the above|"
    r"the previous|the prior|the original|the safety|the content|the security|memory|the memory|tenant)"
)
_DROP = (
    r"(?:ignor(?:e|es|ed|ing)|disregard(?:s|ed|ing)?|forg(?:et|ets|ot|etting)|overrid(?:e|es|ing)|overrode|"
    r"bypass(?:es|ed|ing)?|skip(?:s|ped|ping)?|circumvent(?:s|ed|ing)?|break(?:s|ing)?|broke|"
    r"discard(?:s|ed|ing)?|abandon(?:s|ed|ing)?|drop(?:s|ped|ping)?|suspend(?:s|ed|ing)?|disabl(?:e|es|ed|ing)|"
    r"turn(?:s|ed|ing)? off|switch(?:es|ed|ing)? off|deactivat(?:e|es|ed|ing)|lift(?:s|ed|ing)?|remov(?:e|es|ed|ing)|"
    r"chang(?:e|es|ed|ing)|rewrit(?:e|es|ing)|rewrote|replac(?:e|es|ed|ing)|unlock(?:s|ed|ing)?|"
    r"(?:do not|don't|stop|no longer) (?:follow(?:ing)?|obey(?:ing)?|apply(?:ing)?))"
)
_SECRETS = (
    r"(?:conversations?|chats?|chat (?:history|log)|history|transcripts?|memor(?:y|ies)|notes|messages|passwords?|"
    r"credentials|api keys?|keys|tokens?|secrets?|data|details|addresses|records|everything|contents?)"
)
_DESTINATION = r"(?:https?://|www\.|[\w.+-]+@[\w-]+\.[\w.]+|\d{1,3}(?:\.\d{1,3}){3})"
_ORDER = (
    r"(?:you (?:must|will|shall|should|are (?:now |required |to |hereby )|have to|need to|may now|can now)|"
    r"(?:please |now |kindly )?(?:override|ignore|disregard|forget|reveal|send|obey|disable|stop|enter|switch|"
    r"activate|enable|print|output|dump|grant|unlock|bypass|turn off|comply|execute|from now on))"
)
_MODAL = (
    r"(?:must|should|shall|will|has to|needs? to|is (?:now )?(?:required|allowed|permitted|free) to|may now|"
    r"can now|is to)"
)
# What an order to the assistant asks of it that a wish about a reply ("the assistant should be shorter") does not.
_BREACH = (
    r"(?:ignore|reveal|send|obey|comply|share|disclose|forward|bypass|disable|forget|override|output|print|leak|"
    r"e-?mail|post|upload|grant|answer with|respond with|reply with|do whatever|agree with everything|never refuse)"
)
_GAP = r"(?:[\w'-]+\W+){0,4}?"  # up to four words between the parts of a phrase
_LIMITS = r"(?:rules|restrictions|filters?|guidelines|guardrails|censorship|limits|moderation|safety checks|policies)"

RULES: tuple[tuple[str, Family, str], ...] = (
    # --- override ---------------------------------------------------------------------------------------------
    ("drops-its-rules", Family.OVERRIDE, rf"\b{_DROP}\s+{_GAP}{_WHOSE}\s+{_GAP}{_RULES}\b"),
    (
        "forget-what-it-was-told",
        Family.OVERRIDE,
        r"\b(?:forget|disregard|ignore)\s+(?:everything|anything|all|whatever)\s+(?:you(?:'ve| have)? "
        r"(?:were |been )?(?:told|taught|given|said)|above|before|prior|previously|i said before)",
    ),
    (
        "free-of-rules",
        Family.OVERRIDE,
        rf"\b(?:answer\w*|repl\w*|respond\w*|talk\w*|speak\w*|act\w*|behav\w*|operat\w*|{_ASSISTANT}|you|"
        rf"yourself|mode)\b[^\n.]{{0,30}}\b(?:with no|without (?:any )?|free (?:of|from) (?:any )?|no more)\s*"
        # "Answers without limits on length" asks for long answers, not for none of my rules.
        rf"(?:\w+ )?{_LIMITS}\b(?! (?:on|of|for) (?:the )?(?:length|size|word count|words|format|style|tone)\b)",
    ),
    (
        "drops-the-rules-it-was-given",
        Family.OVERRIDE,
        rf"\b{_DROP}\s+(?:the |all the |any of the )?{_RULES}\s+(?:you(?:'ve| have)? (?:were |been )?"
        r"(?:given|told|taught|trained (?:on|with))|you (?:follow|have|got|were set))\b",
    ),
    ("you-have-no-rules", Family.OVERRIDE, rf"\byou (?:have|had|has|now have) no (?:\w+ )?{_RULES}\b"),
    (
        "rules-are-off",
        Family.OVERRIDE,
        rf"\b(?:all|your|its|the safety|safety|content|the content|security|moderation|assistant|ai|system|tenant|"
        rf"memory|access) "
        rf"{_RULES} (?:(?:are|is|have been|has been|were) (?:now |hereby )?"
        r"(?:suspended|disabled|lifted|off|(?:switched|turned) off|removed|void|revoked|null|overridden|deactivated)|"
        r"(?:don't|do not|doesn't|does not|no longer|never) (?:apply|count))\b",
    ),
    (
        "new-task",
        Family.OVERRIDE,
        r"\byour (?:new|real|actual|only|true) (?:task|job|goal|role|purpose|instructions?|mission|objective)\b",
    ),
    ("stop-filtering", Family.OVERRIDE, r"\b(?:stop|quit|cease|no longer) (?:filtering|censoring|moderating)\b"),
    (
        "reveal-the-prompt",
        Family.OVERRIDE,
        r"\b(?:reveal|print|show|tell me|output|repeat|leak|give me|dump|recite|display|contents? of)\s+(?:me\s+)?"
        r"(?:(?:your|its) (?:\w+ ){0,2}(?:instructions|configuration|rules|prompt)|(?:the|your|its) (?:\w+ )?"
        r"(?:system (?:prompt|message)|initial prompt|original prompt|hidden (?:rules|instructions|prompt)))\b",
    ),
    # --- orders addressed to the assistant --------------------------------------------------------------------
    (
        "calls-it-by-name",
        Family.ADDRESSED,
        rf"(?:^|[.!?;]\s)\s*(?:(?:dear|hey|hi|ok|okay|attention|note (?:for|to)) )?(?:the )?{_ADDRESSEE}\s*[,:]\s*"
        rf"{_ORDER}",
    ),
    (
        "the-assistant-must",
        Family.ADDRESSED,
        rf"\b(?:the|this) {_ASSISTANT} {_MODAL} (?:(?:always|never|now|also|immediately) )?{_BREACH}\b",
    ),
    (
        "you-are-now",
        Family.ADDRESSED,
        r"\byou (?:are|will be|will|shall) now (?:be |act|behave|become|play|operate|in |an? |dan\b|free|"
        r"unrestricted|unfiltered|jailbroken|allowed|able|no longer)",
    ),
    (
        "unbound-mode",
        Family.ADDRESSED,
        r"\b(?:unfiltered|uncensored|unrestricted|jailbroken|unaligned|evil) "
        r"(?:assistant|ai|mode|model|version|bot|chatbot)\b",
    ),
    (
        "special-mode",
        Family.ADDRESSED,
        r"\b(?:god|dan|jailbreak|sudo|unrestricted|unfiltered|unlocked) mode\b|"
        r"\b(?:enable|enter|activate|switch (?:in)?to|turn on|go into) (?:developer|dev) mode\b"
        r"(?! on (?:my|the|your|his|her|our|a)\b)",
    ),
    (
        "jailbreaks-it",
        Family.ADDRESSED,
        rf"\bjailbr(?:eak|eaking|oke|oken)\s+(?:you|it|the {_ASSISTANT})\b|\bjailbreak (?:is )?(?:on|active|enabled)\b",
    ),
    (
        "obeys-what-it-reads",
        Family.ADDRESSED,
        # Text the user brings in (a document, a page, a file) is data to read, never orders to the assistant.
        r"\b(?:treat|take|follow|obey|execute|carry out|act on)\b[^\n.]{0,12}\b(?:any|all|every|the)? ?"
        r"(?:instructions?|commands?|orders?|directions?|text|content)\b[^\n.]{0,20}\b(?:in|inside|within|from)\b"
        r"[^\n.]{0,12}\b(?:documents?|web ?pages?|pages|sites?|websites?|files?|links?|e-?mails?|attachments?|pdfs?)\b"
        r"[^\n.]{0,30}\b(?:as (?:commands|instructions|orders)|(?:the user|they|this user|he|she) "
        r"(?:shares?|sends?|pastes?|uploads?|links?))\b",
    ),
    (
        "obeys-everything",
        Family.ADDRESSED,
        r"\b(?:obey (?:me|everything|anything|only|every|all|the user)|comply with (?:everything|anything|every|all)|"
        r"agree with everything)\b",
    ),
    (
        "never-refuses",
        Family.ADDRESSED,
        r"\b(?:never|don't|do not|stop|no longer) (?:refus(?:e|ing)|declin(?:e|ing)|say(?:ing)? no|"
        r"warn(?:ing)? (?:\w+ ){0,3}(?:about|of) (?:any |the )?(?:risks?|dangers?|safety|consequences)|"
        r"question(?:ing)? my (?:requests|orders|instructions|commands)|apply(?:ing)? (?:any |the )?"
        r"(?:restrictions|rules|filters|safety)|mention(?:ing)? (?:that you are|you are|you're|safety|any safety|"
        r"the safety))\b",
    ),
    (
        "even-the-harmful-ones",
        Family.ADDRESSED,
        r"\b(?:every|any|all)\b[^\n.]{0,40}\b(?:requests?|questions?|demands?|prompts?|tasks?|commands?)\b"
        r"[^\n.]{0,30}\beven (?:the |if (?:it'?s|they'?re) )?(?:dangerous|harmful|illegal|unsafe|unethical|"
        r"malicious|risky|forbidden)\b",
    ),
    (
        "runs-it-unchecked",
        Family.ADDRESSED,
        rf"(?:^|\b(?:always|just|you|{_ASSISTANT}|must|should|will)\s+)(?:execute|run)s?\b[^\n.]{{0,50}}"
        r"\b(?:commands?|scripts?|code|programs?|snippets?)\b[^\n.]{0,60}\bwithout (?:asking|checking|"
        r"confirm\w*|review\w*|question\w*|permission|approval|reading|looking)",
    ),
    # --- spoofed roles, sections and tokens -------------------------------------------------------------------
    (
        "role-label",
        Family.SPOOF,
        r"^\s*[\[(]?\s*(?:system|developer|admin|administrator|operator|root|assistant|ai|instructions?|"
        r"system prompt|system message|sys)\s*[\])]?\s*:",
    ),
    ("bracketed-role", Family.SPOOF, r"\[\s*/?\s*(?:system|inst|sys|assistant|admin|instructions?|developer)\s*\]"),
    (
        "prompt-section",
        Family.SPOOF,
        r"^\s*#{1,6}\s*(?:system|instructions?|rules|new rules|prompt|system prompt|admin|developer|safety|policy|"
        r"override)\b",
    ),
    (
        "new-rules-follow",
        Family.SPOOF,
        r"\b(?:new|updated|revised|additional|real|actual|hidden|secret) (?:instructions?|system prompt|directives?)"
        r"\s*:|\bnew rules?\s*:\s*(?:you|the assistant|the ai|always|never|ignore|from now on)\b",
    ),
    ("template-token", Family.SPOOF, r"<\|[a-z_ ]{1,20}\|>|<</?sys>>|\[/?inst\]"),
    ("fenced-role", Family.SPOOF, r"^\s*```\s*(?:system|instructions?|prompt|admin|developer)\b"),
    # --- tags -------------------------------------------------------------------------------------------------
    (
        "prompt-tag",
        Family.TAG,
        r"[<\[]\s*/?\s*(?:remembered_data|remembered data|system|instructions?|prompt|context|assistant|user|admin|"
        r"developer|sys|tools?|function(?:_call)?|memor(?:y|ies)|rules|policy|im_start|im_end)\b[^<>\[\]]{0,80}[>\]]",
    ),
    # --- exfiltration -----------------------------------------------------------------------------------------
    (
        "sends-it-out",
        Family.EXFILTRATION,
        rf"\b(?:send|sends|sending|post|posting|forward|forwarding|e-?mail|emailing|upload|uploading|transmit|leak|"
        rf"exfiltrate|copy|mail|submit|share|sharing)\b[^\n]{{0,80}}?\b{_SECRETS}\b[^\n]{{0,60}}?"
        rf"\b(?:to|at|into|on)\s+{_DESTINATION}",
    ),
    ("link-with-a-slot", Family.EXFILTRATION, r"https?://\S*[?&][\w-]+=(?:$|\s|\{|%7b|\[|<)"),
    ("image-beacon", Family.EXFILTRATION, r"!\[[^\]]*\]\(\s*https?://"),
    (
        "calls-a-tool",
        Family.EXFILTRATION,
        r"\b(?:call|use|invoke|run|trigger|execute)\s+(?:the |your |a )?[\w.-]*\s*"
        r"(?:tool|function|plugin|webhook)s?\b[^\n]{0,80}(?:https?://|url\s*=|passwords?|credentials|api keys?|"
        r"secrets?|tokens?|memor(?:y|ies)|conversation|chat history)",
    ),
    (
        "fetches-a-link",
        Family.EXFILTRATION,
        rf"\b(?:fetch|visit|browse|curl|ping|load|request|open)\s+{_DESTINATION}\S*[^\n]{{0,60}}"
        r"(?:memor(?:y|ies)|passwords?|credentials|api keys?|secrets?|tokens?|conversation|history|contents of your)",
    ),
    (
        "other-peoples-data",
        Family.EXFILTRATION,
        r"\b(?:share|reveal|give (?:me|them|out|this user|the user)|show (?:me|them|this user|the user)|"
        r"tell (?:me|them|this user|the user)|hand (?:out|over)|send|list|dump|output|print)\b[^\n.]{0,40}"
        r"\b(?:other|another|"
        r"all (?:the )?other) (?:users?|customers?|clients?|accounts?|people)(?:'s?|s')? (?:\w+ )?"
        r"(?:data|memor(?:y|ies)|"
        r"addresses|details|information|records|conversations|chats|passwords|emails|phone numbers)\b|"
        r"\b(?:memor(?:y|ies)|data|records|details|information)\b[^\n.]{0,30}\babout (?:other|all (?:the )?other) "
        r"(?:users|customers|clients|accounts)\b",
    ),
    # --- planted rules ----------------------------------------------------------------------------------------
    (
        "remember-you-must",
        Family.PLANTING,
        r"\b(?:remember|note|keep in mind|don't forget|never forget)\b\W*(?:this|that)?\W*\s*you "
        r"(?:must|should|will|shall|have to|need to|are to|always|never)\b",
    ),
    (
        "keep-as-a-rule",
        Family.PLANTING,
        r"\b(?:remember|store|save|keep|note|record|treat|add|write|put|log)\b\s+(?:this|it|that|the following)\s+"
        r"(?:as|to|into|in)\s+(?:a |an |your |the )?(?:permanent |new |standing |core |system |hard )?"
        r"(?:rule|instruction|directive|policy|system prompt|instructions|rules|guidelines|programming|commandment)\b",
    ),
    # --- authority claims -------------------------------------------------------------------------------------
    (
        "user-is-in-charge",
        Family.PRIVILEGE,
        r"(?:\b(?:the|this) |^)user (?:is|has been made|was made) (?:an? |the )?(?:system |site )?(?:admin|"
        r"administrator|root|superuser|"
        r"super user|developer|owner|operator|moderator|god)\b"
        # Of something of their own ("the admin of their company's jira") it is their job, not a claim over me.
        r"(?! (?:of|at|for|on|in) "
        r"(?!(?:this|the|your|its) (?:assistant|ai|system|bot|chatbot|service|account|chat)\b))",
    ),
    (
        "i-am-your-maker",
        Family.PRIVILEGE,
        r"\b(?:i am|i'm|im|as|we are|we're) your (?:developer|creator|admin|administrator|owner|maker|programmer|"
        r"operator|master)\b",
    ),
    (
        "granted-privileges",
        Family.PRIVILEGE,
        r"\b(?:grant|granted|given|give) (?:this user |the user |me |them |you )?(?:admin|administrator|root|"
        r"developer|elevated|special|unlimited|sudo) (?:privileges|access|rights|permissions|clearance)\b",
    ),
    (
        "holds-its-controls",
        Family.PRIVILEGE,
        rf"\b(?:has|have|holds?|was given|got) (?:full |root |admin(?:istrator)? |developer |unrestricted |special )"
        rf"(?:access|rights|privileges|control) (?:to|over) (?:your|its|the {_ASSISTANT}'?s?|the system'?s?)\b",
    ),
    ("orders-you", Family.PRIVILEGE, r"\b(?:i|we) (?:hereby )?(?:instruct|order|command|authori[sz]e) you to\b"),
)
