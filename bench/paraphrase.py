"""A paraphrase set: memories and questions about them that share few words, so only meaning can find the target.

Each pair is a fact as a person would say it and a question as they would later ask it, with the key words swapped
for synonyms or descriptions ("beagle" / "dog", "sibling" / "sister"). The facts go in among synthetic filler
(bench/synthetic.py) at every size; a question scores a hit@k when its own fact is in the top k.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PAIRS: tuple[tuple[str, str], ...] = (
    ("My sister adopted a beagle puppy last spring", "What kind of dog does my sibling have?"),
    ("I'm allergic to peanuts, they make my throat swell", "Which food must I avoid because of a reaction?"),
    ("We moved to Lisbon in March for my partner's new role", "Where did we relocate to for work?"),
    ("I ran my first marathon in three hours and forty minutes", "How long did the long-distance race take me?"),
    ("My daughter started violin lessons on Tuesdays", "Which instrument is my child learning?"),
    ("The dentist said I need a root canal on a molar", "What treatment does my tooth require?"),
    ("I switched from coffee to green tea to sleep better", "What hot drink did I replace to improve my rest?"),
    ("Our wedding anniversary is on the ninth of October", "When do my spouse and I celebrate getting married?"),
    ("I drive a blue hybrid hatchback", "What car do I own?"),
    ("My manager promoted me to senior engineer in June", "When did I get a better job title?"),
    ("Grandma's apple pie recipe uses cinnamon and nutmeg", "Which spices go into the family dessert?"),
    ("I broke my wrist skateboarding when I was twelve", "What injury did I get as a kid?"),
    ("I'm learning Japanese with an app every morning", "Which foreign language am I studying?"),
    ("My favourite band is Radiohead", "Which musical group do I like most?"),
    ("We booked a cabin near the lake for August", "Where are we staying for the summer holiday?"),
    ("My son is terrified of thunderstorms", "What weather frightens my boy?"),
    ("I take metformin twice a day for diabetes", "Which medication am I on for blood sugar?"),
    ("The plumber is coming Thursday to fix the leaking sink", "When will someone repair the kitchen tap?"),
    ("I've been vegetarian since college", "Do I eat meat?"),
    ("My brother lives in Toronto and works as a nurse", "What does my sibling in Canada do for a living?"),
    ("I play five-a-side football on Wednesday evenings", "Which sport do I do midweek?"),
    ("Our cat Miso needs her thyroid pills with dinner", "What medicine does our pet take?"),
    ("I hate flying and always take the train in Europe", "How do I prefer to travel across the continent?"),
    ("My mother's birthday is the second of May", "When was mum born?"),
    ("I paid off the student loan in January", "When did I clear my education debt?"),
    ("I'm saving for a house deposit, about twenty thousand so far", "How much money have I put aside for a home?"),
    ("The therapist suggested journaling before bed", "What did the counsellor recommend for the evenings?"),
    ("I sprained my ankle hiking in the Alps", "How did I hurt my foot in the mountains?"),
    ("Our team shipped the billing service rewrite on Friday", "When did we release the new payments system?"),
    ("I can't stand coriander, it tastes like soap to me", "Which herb do I dislike?"),
    ("My husband snores so I sleep with earplugs", "Why do I wear something in my ears at night?"),
    ("I volunteer at the animal shelter on Saturdays", "Where do I help out at weekends?"),
    ("The landlord raised the rent by eight percent", "How much more do I pay for the flat now?"),
    ("I passed my driving test on the second attempt", "How many tries did it take to get my licence?"),
    ("My best friend Priya is getting married in Goa", "Where is my closest mate's wedding?"),
    ("I'm reading a biography of Marie Curie", "Which scientist's life story am I going through?"),
    ("I quit smoking three years ago", "When did I give up cigarettes?"),
    ("We adopted two chickens for fresh eggs", "Which birds do we keep in the garden?"),
    ("My laptop's battery dies after an hour", "What is wrong with my computer?"),
    ("I get migraines when I skip lunch", "What triggers my bad headaches?"),
    ("My grandfather fought in Korea", "Which war did grandpa serve in?"),
    ("I'm training for a triathlon in September", "What endurance event am I preparing for?"),
    ("Our neighbour's dog barks all night", "What keeps us awake next door?"),
    ("I bake sourdough every Sunday", "What bread do I make at the weekend?"),
    ("My wife is a paediatrician at the city hospital", "What is my spouse's job?"),
    ("I lost my passport in Rome last year", "Where did my travel document go missing?"),
    ("I want to learn to sail before I turn forty", "What water skill do I hope to pick up?"),
    ("I'm colour blind and can't tell red from green", "Which colours do I confuse?"),
    ("The kids' school starts at eight fifteen", "What time do classes begin for my children?"),
    ("I keep my spare key under the blue flowerpot", "Where is the extra house key hidden?"),
)

# Written after the keep rule was set from PAIRS, and never looked at while setting it: a check that the rule is
# general, not fitted to the first half (docs/recall.md).
HELD_OUT: tuple[tuple[str, str], ...] = (
    ("My nephew collects vintage stamps from Africa", "What hobby does my sister's boy have?"),
    ("I'm lactose intolerant so I drink oat milk", "Why do I avoid dairy?"),
    ("We celebrated Dad's retirement at an Italian restaurant", "Where did we mark my father leaving work?"),
    ("I fractured two ribs in a cycling crash", "What bones did I break on my bike?"),
    ("My niece is studying marine biology in Plymouth", "What subject is my brother's daughter taking at university?"),
    ("The boiler broke down and the flat has no hot water", "Why can't I take a warm shower at home?"),
    ("I've started knitting a scarf for my aunt", "What am I making for my relative with needles?"),
    ("Our flight to Tokyo leaves at six in the morning", "When does our plane to Japan depart?"),
    ("I was diagnosed with asthma as a toddler", "What breathing condition have I had since childhood?"),
    ("My girlfriend works night shifts at the airport", "When does my partner do her job?"),
    ("I bought a secondhand piano for the living room", "What instrument did I get for the lounge?"),
    ("The vet said our rabbit needs her teeth filed", "What does our bunny's dentistry involve?"),
    ("I'm allergic to cats, they make my eyes stream", "Which animal gives me a reaction?"),
    ("We're repainting the nursery a pale yellow", "What colour will the baby's room be?"),
    ("My uncle owns a vineyard in Portugal", "What business does my relative run abroad?"),
    ("I cycle twelve miles to the office each day", "How far is my commute on two wheels?"),
    ("My cousin just had twins, a boy and a girl", "What happened in my family's newest birth?"),
    ("I gave up sugar for Lent this year", "What sweet thing did I stop eating in spring?"),
    ("The optician says I need reading glasses now", "What did the eye doctor tell me?"),
    ("I'm terrified of spiders since a camping trip", "Which creepy crawlies scare me?"),
    ("My flatmate plays the drums at midnight", "What noise keeps me up from the person I live with?"),
    ("We planted tomatoes and courgettes in the allotment", "What vegetables are growing in our plot?"),
    ("I ran out of data on my phone plan again", "Why can't I use mobile internet?"),
    ("My stepmother teaches chemistry at a secondary school", "What does my father's wife do for work?"),
    ("I tore a ligament in my knee playing rugby", "What sports injury did I get on my leg?"),
    ("I speak fluent Portuguese because my mum is Brazilian", "Which language do I know through my mother?"),
    ("The council is closing the library on our street", "What public building near us is shutting?"),
    ("I'm getting braces fitted next month", "What dental work is coming up for me?"),
    ("My son wants to be an astronaut when he grows up", "What career dream does my boy have?"),
    ("We sold the old caravan to our neighbours", "Who bought our holiday trailer?"),
    ("I sleepwalk when I'm stressed", "What do I do at night when anxious?"),
    ("My best mate moved to New Zealand for a teaching job", "Where did my closest friend emigrate?"),
    ("I wear contact lenses but glasses at weekends", "How do I correct my eyesight on Saturdays?"),
    ("The car failed its MOT because of worn brakes", "Why didn't my vehicle pass inspection?"),
    ("I meditate for ten minutes after waking up", "What calming habit do I have in the morning?"),
    ("My daughter lost her first tooth at school", "What happened to my girl's mouth in class?"),
    ("Our wifi router keeps dropping the connection", "What is wrong with the internet at home?"),
    ("I'm a volunteer firefighter in the village", "What emergency role do I do unpaid?"),
    ("I have a tattoo of a swallow on my wrist", "What ink do I have on my arm?"),
    ("My parents are celebrating their ruby wedding", "Which anniversary are mum and dad marking?"),
    ("I inherited my grandmother's silver locket", "What jewellery came to me from my nan?"),
    ("The washing machine is leaking onto the floor", "Which appliance is flooding the kitchen?"),
    ("I can't eat gluten since being diagnosed coeliac", "Why do I avoid bread and pasta?"),
    ("My godson turns eighteen in November", "When is my godchild's coming of age?"),
    ("I joined a choir that sings on Thursday nights", "What musical group do I belong to midweek?"),
    ("Our basement floods every time it rains heavily", "What happens downstairs in a storm?"),
    ("I'm writing a novel set in Victorian London", "What kind of book am I working on?"),
    ("My step-brother is a pilot for a cargo airline", "What does my stepfamily member fly?"),
    ("I learned to swim only at the age of thirty", "When did I become able to stay afloat?"),
    ("The baby wakes every two hours for a feed", "How often is our infant up at night?"),
)
# Written after every recall rule of the tree it was first measured on (2026-12-03) and never used to choose one:
# the next check that boosts bury no strong match. Read once per change, and reported; never tuned on.
FRESH: tuple[tuple[str, str], ...] = (
    ("My uncle breeds racing pigeons in his back garden", "What birds does my dad's brother raise?"),
    ("I get migraines whenever I skip lunch", "Why do I end up with bad headaches on busy days?"),
    ("Our twins were born six weeks early", "How premature were my two babies?"),
    ("I sold my motorbike to pay for the wedding", "What did I give up to fund getting married?"),
    ("The landlord is raising the rent by two hundred a month", "How much more will our flat cost?"),
    ("I play five-a-side football on Monday evenings", "What team sport do I do at the start of the week?"),
    ("My grandad was a coal miner in Yorkshire", "What did my mother's father do for a living?"),
    ("I've been learning Portuguese on an app for a year", "Which language am I studying on my phone?"),
    ("Our cat had to have three teeth pulled", "What operation did the kitty have at the vet?"),
    ("I keep bees on the allotment", "What insects do I look after at my plot?"),
    ("My wife is training to become a midwife", "What job is my spouse studying for?"),
    ("The roof leaks above the spare bedroom", "Where is water getting into the house?"),
    ("I was made redundant from the bank in January", "When did I lose my finance job?"),
    ("My son is scared of the dark and sleeps with a nightlight", "Why does my boy need a lamp on at bedtime?"),
    ("We spent our honeymoon hiking in Patagonia", "Where did we go trekking after getting married?"),
    ("I take blood pressure tablets every morning", "What medication do I have daily for my heart?"),
    ("My neighbour's dog barks all night", "What keeps me awake next door?"),
    ("I restore old typewriters as a hobby", "What vintage machines do I fix in my spare time?"),
    ("My sister-in-law runs a bakery in Leeds", "What shop does my brother's wife own?"),
    ("I failed my driving theory test twice", "How many attempts did the written exam for my licence take?"),
    ("Our fridge makes a loud humming noise", "Which kitchen appliance is noisy?"),
    ("I'm saving for a deposit on a two-bed flat", "What am I putting money aside to buy?"),
    ("My best friend is getting married in Crete", "Where is my closest pal's wedding?"),
    ("I broke my wrist snowboarding in Austria", "How did I injure my arm on holiday?"),
    ("My mother-in-law moves in with us next month", "Who is coming to live in our house soon?"),
    ("I swim a mile at the leisure centre before work", "What exercise do I do early in the pool?"),
    ("Our daughter wants a hamster for her birthday", "What pet has my girl asked for?"),
    ("I volunteer at the food bank on Saturdays", "Where do I help out at weekends?"),
    ("The boiler service is booked for Friday", "When is the heating engineer coming?"),
    ("I'm colour-blind and can't tell red from green", "Why do I mix up certain shades?"),
    ("My cousin plays cello in an orchestra in Vienna", "What instrument does my relative perform abroad?"),
    ("We adopted a greyhound that retired from racing", "What kind of rescue hound do we have?"),
    ("I quit smoking after twenty years", "What habit did I finally give up?"),
    ("My brother is doing a PhD in volcanoes", "What is my sibling researching at university?"),
    ("I grow chillies on the windowsill", "What spicy plants do I have indoors?"),
    ("Our car was broken into at the station", "What happened to the vehicle while we were on the train?"),
    ("I have a fear of flying and take the ferry instead", "Why do I avoid planes when travelling?"),
    ("My dad had a hip replacement last autumn", "What surgery did my father have?"),
    ("I teach maths at a secondary school", "What subject do I work in at the academy?"),
    ("We're repainting the living room dark green", "What colour will the lounge walls be?"),
    ("My grandma turns one hundred in June", "When is my nan's centenary?"),
    ("I cycle to the office along the canal", "How do I commute to work?"),
    ("The kids start at a new primary school in September", "When do the children change classrooms?"),
    ("I'm vegan and don't wear leather", "Why do I avoid animal products?"),
    ("My flatmate plays drums late at night", "What noise does the person I live with make?"),
    ("I won a pub quiz with my work team", "What contest did my colleagues and I take first place in?"),
    ("Our holiday cottage in Cornwall sleeps eight", "How many people fit in the place we rent by the sea?"),
    ("My niece has a peanut allergy and carries an EpiPen", "What food reaction does my sister's girl have?"),
    ("I play chess online every night before bed", "What board game do I do in the evenings?"),
    ("The dishwasher stopped draining yesterday", "Which appliance broke down this week?"),
)
# Written on 2026-12-06 by a helper session that saw neither the code nor the other sets, in the same manner, to check
# a rule chosen on `FRESH` (which then becomes a tuning set): read once per such change, and reported; never tuned on.
FRESH2: tuple[tuple[str, str], ...] = (
    (
        "My grandmother taught me to knit when I was seven.",
        "Who showed me how to make things with yarn and needles as a kid?",
    ),
    ("I'm allergic to shellfish, especially prawns and crab.", "Which seafood makes me break out in a reaction?"),
    ("My sister lives in Melbourne with her two dogs.", "Which Australian city is my female sibling based in?"),
    (
        "I work night shifts at the hospital three times a week.",
        "How frequently do I do overnight stints at my medical job?",
    ),
    (
        "We paid off our mortgage last spring after twenty-two years.",
        "When did we finally clear the loan on our house?",
    ),
    (
        "I've been learning Portuguese on an app for about eight months.",
        "How long have I been studying the language spoken in Brazil?",
    ),
    ("Our cat is terrified of the vacuum cleaner.", "Is our moggy scared of any household appliance?"),
    ("I ran my first marathon in Berlin in 2019.", "Which city hosted the debut long-distance race I finished?"),
    ("My dad had a heart bypass operation two years ago.", "What cardiac procedure did my father go through?"),
    ("I drink my coffee black with no sugar.", "How do I take my morning brew?"),
    ("My son is starting secondary school in September.", "When is my boy moving up from primary?"),
    ("I keep bees on my allotment, about three hives.", "How many colonies of honey-makers do I look after?"),
    ("I broke my left wrist falling off a skateboard at fourteen.", "How did I injure my hand joint as a teen?"),
    ("My wife and I got married on a beach in Crete.", "Where did my spouse and I have our wedding?"),
    ("I'm saving up for a camper van to tour Scotland.", "What vehicle am I putting money aside for?"),
    ("I always read for half an hour before bed.", "What's my nightly wind-down routine?"),
    ("My landlord refuses to fix the damp in the bathroom.", "What problem won't the owner of my rental sort out?"),
    ("I failed my driving test twice before passing.", "Did I get my licence on the first attempt?"),
    ("We adopted a greyhound from a rescue centre last year.", "What breed of dog did we take in from a shelter?"),
    ("My brother is a firefighter in Manchester.", "What does my male sibling do for a living?"),
    ("I'm lactose intolerant, so I stick to oat milk.", "Can I have cheese and cream without problems?"),
    ("I grow tomatoes and cucumbers in a small greenhouse.", "What vegetables do I raise under glass?"),
    ("My first job was stacking shelves at a supermarket.", "What was my earliest paid work?"),
    (
        "I play five-a-side football every Thursday evening.",
        "Which night of the week do I have my small-team soccer game?",
    ),
    (
        "I've had tinnitus in my right ear since a concert in 2015.",
        "What's the cause of the ringing I hear on one side?",
    ),
    ("My mum is turning seventy in November.", "When is my mother's big birthday milestone coming up?"),
    (
        "We're planning to move to the coast once the kids leave home.",
        "Where do we hope to relocate after our children grow up and go?",
    ),
    ("I spend about £150 a month on my phone and internet.", "How much do my mobile and broadband bills come to?"),
    ("I used to live in Tokyo for three years teaching English.", "What did I do during my years in Japan?"),
    ("My daughter plays the cello in the school orchestra.", "Which stringed instrument does my girl practise?"),
    ("I can't eat anything spicy because of my stomach ulcer.", "Why do I stay away from hot food?"),
    ("My grandad fought in the Korean War.", "Which conflict did my grandfather serve in?"),
    ("I've been vegetarian since I was at university.", "How long have I not eaten meat?"),
    ("I take the train to work, it's forty minutes each way.", "How long is my daily commute by rail?"),
    ("Our boiler broke down on Christmas Eve last year.", "When did our heating system pack in?"),
    ("I collect vinyl records, mostly jazz from the sixties.", "What kind of music do I have on LPs?"),
    ("I'm training to become a chartered accountant.", "What professional qualification am I working towards?"),
    ("My best friend moved to Canada after her divorce.", "Which country did my closest pal relocate to?"),
    (
        "I snore so loudly my partner sleeps in the spare room.",
        "Why does my other half go to another bedroom at night?",
    ),
    ("We went to Iceland for our tenth anniversary.", "Where did we travel to celebrate a decade together?"),
    ("I have a standing desk because of my back pain.", "Why do I work on my feet at the office?"),
    ("My nephew is getting baptised next month.", "What religious ceremony is coming up for my sibling's boy?"),
    (
        "I owe my parents about two thousand pounds for the car repairs.",
        "How much money do I still have to pay back to mum and dad?",
    ),
    ("I sing alto in a community choir.", "What voice range do I perform in my local chorus?"),
    ("I gave up smoking on my fortieth birthday.", "When did I quit cigarettes?"),
    ("Our neighbour's rooster wakes us up at five every morning.", "What animal next door disturbs our sleep at dawn?"),
    ("I've got a fear of flying so we usually take the ferry.", "Why do we prefer boats over planes?"),
    ("My first car was a battered old Ford Fiesta.", "What was the earliest vehicle I owned?"),
    ("I volunteer at a food bank on Saturday mornings.", "Where do I help out unpaid at weekends?"),
    ("I'm on blood pressure tablets that make me dizzy sometimes.", "What medication sometimes leaves me lightheaded?"),
)

SETS: dict[str, tuple[tuple[str, str], ...]] = {
    "tuning": PAIRS,
    "held-out": HELD_OUT,
    "fresh": FRESH,
    "fresh2": FRESH2,
}


@dataclass(frozen=True)
class Hits:
    """How many questions found their fact in the top 1, 5 and 10."""

    at1: int
    at5: int
    at10: int
    questions: int

    @classmethod
    def of(cls, ranks: Sequence[int | None]) -> Hits:
        """`ranks`: each question's 1-based rank of its fact, None when it was not returned."""
        return cls(
            at1=sum(1 for r in ranks if r is not None and r <= 1),
            at5=sum(1 for r in ranks if r is not None and r <= 5),
            at10=sum(1 for r in ranks if r is not None and r <= 10),
            questions=len(ranks),
        )


def rank_of(target: str, returned: Sequence[str]) -> int | None:
    return returned.index(target) + 1 if target in returned else None
