"""Generate the router's bundled training set (src/opencortex/router/data/train.jsonl).

Run: python scripts/router_train_gen.py            (rewrites the jsonl; deterministic)

Every line is written here, in this project's own phrasing: templates x slot fillers per target,
plus hand-written sentences, then light surface noise (case, punctuation, politeness, typos) so
the classifier does not key on one register.  Bump VERSION when the generator's output changes
on purpose: the classifier's cache is keyed by the file's hash, so any change retrains.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

VERSION = 1
PER_TARGET = 450
OUT = Path(__file__).resolve().parents[1] / "src" / "opencortex" / "router" / "data" / "train.jsonl"

# -- slot fillers ------------------------------------------------------------------------------
TOPICS = ["stoicism", "sourdough", "the garden layout", "rust traits", "kafka consumers",
          "my grandmother's recipes", "sleep hygiene", "the book club", "home insurance",
          "intermittent fasting", "the Lisbon trip", "type theory", "bird migration",
          "postgres vacuum", "the quarterly plan", "jazz chords", "the marathon training",
          "negotiation", "the apartment move", "category theory", "photography lighting",
          "language learning", "the budget", "tax deductions", "cycling routes", "the novel draft",
          "attention span", "deep work", "public speaking", "journaling habits", "raspberry pi",
          "the kitchen remodel", "vitamin D", "compound interest", "the team offsite",
          "chess openings", "fermentation", "woodworking joints", "emacs config", "zfs pools",
          "hiring interviews", "leadership", "climbing technique", "the wedding", "podcast ideas",
          "the thesis outline", "meditation", "graph databases", "kids' school schedule",
          "the conference talk", "productivity", "habit stacking", "note-taking methods", "the Roman empire", "bread baking",
          "sailing knots", "the dentist visit", "electric cars", "beekeeping", "my car",
          "saving for retirement", "the Japan itinerary", "knitting patterns", "onboarding",
          "the rent increase", "mushroom foraging", "the school fundraiser", "password managers",
          "the garden shed", "birthday plans", "coffee brewing", "the reading group", "Spanish verbs"]
TASKS = ["call the plumber", "buy milk", "renew the car insurance", "email Priya about the draft",
         "book a dentist appointment", "pay the water bill", "water the tomatoes",
         "return the library books", "send the invoice to Acme", "fix the bike tyre",
         "order new printer ink", "write the blog post", "review Tom's pull request",
         "pick up the dry cleaning", "file the expense report", "back up the laptop",
         "cancel the gym membership", "prepare slides for Monday", "clean the gutters",
         "get a birthday present for Ana", "schedule the car service", "update my CV",
         "reply to the landlord", "buy train tickets to Lyon", "submit the grant report",
         "call mum", "defrost the freezer", "sort the tax papers", "charge the camera batteries",
         "change the smoke alarm battery", "check the NAS", "finish the quarterly report",
         "ask Sam about the budget", "tidy the garage", "read chapter four",
         "book flights for the reunion", "phone the bank", "mow the lawn", "sign the lease",
         "renew my passport", "order a new charger", "send thank-you cards", "print the boarding pass",
         "buy a gift for the wedding", "fill in the census form", "repot the fern"]
WHENS = ["tomorrow", "tomorrow at 9", "on Friday", "next Tuesday", "tonight", "this weekend",
         "in two days", "by Thursday", "at 3pm", "next week", "on the 14th", "end of the month",
         "Monday morning", "in an hour", "before the weekend", "every Sunday", "daily",
         "on March 3", "in three weeks", "after lunch"]
PEOPLE = ["Sam", "Priya", "Tom", "the accountant", "Ana", "my manager", "Lena", "the landlord",
          "Bob", "the vet", "Marco", "the client"]
PROJECTS = ["website redesign", "garden", "kitchen remodel", "thesis", "move", "tax return",
            "podcast", "home server", "wedding", "novel", "grant application", "offsite"]
TAGS = ["work", "home", "errands", "urgent", "reading", "health", "finance", "calls"]
FILES = ["notes.txt", "main.py", "the config file", "README.md", "server.log", "data.csv",
         "todo.org", "package.json", "the Makefile", "setup.cfg", "/etc/hosts", "app.log",
         "report.pdf", "index.html", "the changelog", "requirements.txt"]
DIRS = ["the downloads folder", "this directory", "src", "~/projects", "the home folder",
        "/tmp", "the photos folder", "the build dir", "the repo", "~/Documents"]
TECH = ["rust 1.80", "python 3.13", "the new iphone", "org-mode 9.7", "postgres 17", "emacs 30",
        "the framework laptop", "kubernetes", "tailwind", "the raspberry pi 5", "htmx", "deno",
        "the steam deck", "fedora", "debian trixie", "sqlite"]
PLACES = ["Berlin", "Oslo", "Lisbon", "Kyoto", "Toronto", "Nairobi", "Melbourne", "Lyon",
          "Denver", "Seville"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
PAST_WORK = ["the flaky login test", "the memory leak", "the database migration", "the regex for dates",
             "the timezone bug", "the docker compose setup", "the pricing page", "the caching layer",
             "the CSV import", "the deploy script", "the search ranking", "the auth refactor",
             "the slow query", "the logo ideas", "the backup strategy", "the API pagination",
             "the websocket reconnect", "the parser rewrite", "the invoice template",
             "the onboarding emails"]
VAGUE = ["a while ago", "a few weeks back", "last spring", "sometime in {month}", "months ago",
         "the other day", "last year", "around {month}", "early in {month}", "before the holidays",
         "a couple of months ago", "last summer", "not long ago", "way back", "in the autumn"]
SKILLS = ["turns my meeting notes into action items", "files my receipts by month",
          "summarises RSS feeds every morning", "tracks my workouts", "converts recipes to metric",
          "drafts my weekly status email", "archives done tasks on Sundays",
          "checks my notes for broken links", "formats citations in APA", "tags new photos",
          "translates journal entries", "cleans up my inbox headings", "watches a folder for invoices",
          "extracts quotes from book notes", "reminds me to stretch", "sorts downloads by type",
          "generates a reading list from my notes", "logs my mood each evening"]
NEWPROJ = ["budget-tracker", "a photography portfolio", "a rust CLI called logtail",
           "the family recipe site", "a research paper", "my dotfiles", "a python library",
           "a home automation setup", "a podcast", "a conference talk", "a static blog",
           "a flask api", "a board game prototype", "my novel", "a chrome extension",
           "an invoice parser", "a go service", "a data pipeline"]
QUESTIONS_WORLD = ["what is the capital of Peru", "why do cats purr", "how does a transistor work",
                   "who painted the Night Watch", "what's the difference between a list and a tuple",
                   "explain quantum entanglement simply", "how many bones are in the human body",
                   "what is a monad", "what does idempotent mean", "how do vaccines work",
                   "who invented the telephone", "what's a good name for a cat",
                   "is a tomato a fruit", "how far is the moon", "what is entropy",
                   "explain the CAP theorem", "why is the ocean salty", "what rhymes with orange",
                   "how do I boil an egg", "what is the meaning of life"]

# -- templates per target ----------------------------------------------------------------------
T: dict[str, list[str]] = {}

T["notes"] = [
    "what's my take on {topic}",
    "where's that note about {topic}",
    'what did I read about {topic}',
    'I wrote something about {topic} once, find it',
    'show me everything tagged {tag}',
    "what's under the {topic} heading",
    'what do I have on {topic}',
    'my list of {topic} resources',
    'what were the action points from my {topic} notes',
    'did I save a link about {topic}',
    'what book notes do I have on {topic}',
    'remind me of my own rules for {topic}',
    "what's my checklist for {topic}",
    'any entries in my journal mentioning {person}',
    'how did I describe {topic} in my notes',
    "what's the summary I wrote of {topic}",
    'what was my conclusion on {topic} in the org file',
    'explain {topic} from my own notes',
    'which file has my {topic} notes',
    'find what I saved on {topic}',
    'tell me what I captured about {topic} last month',
    'look up {topic} in my knowledge base',
    'what references did I collect on {topic}',
    'what did I highlight in the {topic} book',
    'my principles about {topic}',
    "what's written in my notes under {project}",
    'what are my meeting notes with {person}',
    "show the note I made about {person}'s advice",
    'what did I record about {topic} in the daily notes',
    'what have I learned so far about {topic}',
    'search my files for {topic}',
    'what are my bookmarks on {topic}',
    'the note on {topic} please',
    'any thoughts of mine on {topic}?',
    "where did I write down {person}'s phone number",
    'what was in my {topic} brainstorm',
    'do I have a how-to for {topic}',
    'what pros and cons did I list for {topic}',
    "what's my definition of {topic}",
    'open my {topic} page',
    "what have I written about {topic}", "what did I note about {topic}?",
    "find my notes on {topic}", "search my notes for {topic}", "do I have notes about {topic}",
    "show me what I wrote on {topic}", "anything in my notes on {topic}?",
    "what do my notes say about {topic}", "pull up my note about {topic}",
    "open the note on {topic}", "what are my tips about {topic}?",
    "what are my thoughts on {topic}", "summarise my notes on {topic}",
    "which notes mention {topic}", "my notes on {topic}", "notes about {topic}",
    "{topic}", "{topic} notes", "look in my notes for {topic}",
    "did I ever write anything about {topic}", "where did I put my notes about {topic}",
    "what did I learn about {topic}", "what do I know about {topic} according to my notes",
    "show my journal entries about {topic}", "read me my note on {topic}",
    "what were my takeaways on {topic}", "list the notes tagged {tag}",
    "what ideas have I collected about {topic}", "find the note where I summarised {topic}",
    "which advice have I saved on {topic}?", "my advice to myself on {topic}",
    "remind me what my notes say about {topic}", "show the backlinks to my note on {topic}",
    "which of my notes link to {topic}", "what's in my reading notes on {topic}",
    "what quotes did I save about {topic}", "what did I jot down after the {topic} meeting",
    "give me the gist of my notes on {topic}", "what's my recipe for {topic}",
    "search the memex for {topic}", "grep my notes for {topic}",
    "what have I got on {topic} in my org files", "is there a note on {topic}",
    "what tips did I write down about {topic}", "what are the key points in my {topic} note",
    "what skills did I list for {topic} in my notes", "what does my skill tree note say about {topic}",
    "what tips do I have on {topic}?", "what lessons did I write down about {topic}",
    "what are my notes about learning new skills", "do my notes say anything about {topic} tips",
    "what did I say about {person} in my notes", "notes mentioning {person}",
    "what did I write after talking to {person}", "find the definition of {topic} in my notes",
    "show me my summary of {topic}", "my {topic} cheat sheet",
    "what did I conclude about {topic}", "which of my notes are about {topic}",
    "qu'est-ce que j'ai écrit sur {topic}", "cherche dans mes notes {topic}",
    "was habe ich über {topic} notiert", "such in meinen Notizen nach {topic}",
    "busca en mis notas {topic}", "qué anoté sobre {topic}",
]
T["gtd"] = [
    'stick {task} in my inbox',
    'inbox {task}',
    'add {task} to the inbox please',
    'capture this one: {task}',
    'quick capture: {task}',
    'put down {task} for {when}',
    'I have to {task} {when}, remind me',
    "don't forget: {task}",
    'new todo: {task}',
    'make a task: {task}',
    'tick off {task}',
    '{task} finished',
    'close the {task} task',
    'drop the task about {task}',
    '{task} is cancelled',
    'postpone {task} until {when}',
    'reschedule {task} to {when}',
    '{task} needs to be done by {when}',
    'due date for {task}: {when}',
    'when do I have to {task}?',
    'is {task} scheduled?',
    "what's scheduled for {when}",
    "what's coming up this week",
    'anything urgent today',
    "what's open in the {project} project",
    "what's the status of {project}",
    'which tasks are blocked on {person}',
    "I'm waiting to hear from {person} about the quote",
    'flag {task} as important',
    'tag {task} as {tag}',
    "it'll take about 30 minutes to {task}",
    'what can I do in 15 minutes',
    'errands for this afternoon',
    'tasks for home this weekend',
    "what's on my someday list",
    'park {task} for later',
    'mark {task} as next',
    'what did {person} still owe me',
    'show me my waiting list',
    'which of my tasks are overdue',
    "remind me to {task} {when}", "add {task} to my inbox", "capture this: {task}",
    "put {task} on my list", "add a todo: {task}", "new task {task} {when}",
    "I need to {task} {when}", "don't let me forget to {task}", "todo {task}",
    "capture: {task}", "inbox: {task}", "note to self: {task}",
    "mark {task} as done", "I finished {task}", "{task} is done", "done with {task}",
    "cancel the task to {task}", "I'm not going to {task} anymore, cancel it",
    "schedule {task} for {when}", "move {task} to {when}", "set a deadline for {task} {when}",
    "{task} is due {when}", "when is {task} due?", "what's due {when}?",
    "what do I have to do today", "what's on my agenda", "show my agenda for the week",
    "what's overdue", "what should I work on next", "what's the next step on the {project} project",
    "what's my next action for {project}", "which projects are active", "list my projects",
    "what am I waiting on", "what am I waiting for from {person}",
    "I'm waiting on {person} for the contract", "waiting for {person} to send the quote",
    "tag {task} with {tag}", "what's tagged {tag}", "show my {tag} tasks",
    "what are my {tag} errands", "make {task} high priority", "set priority A on {task}",
    "what are my high priority tasks", "this will take 45 minutes: {task}",
    "add an effort estimate of an hour to {task}", "add a note to the {task} task: ask about the price",
    "what's in my someday list", "move {task} to someday maybe", "what did I cancel",
    "show completed tasks", "make {task} the next action", "what's on my plate tomorrow",
    "anything due before Friday?", "what deadlines are coming up", "do I have anything scheduled {when}",
    "remind me {when} to {task}", "every Tuesday remind me to {task}", "{task} every week",
    "add to inbox {task}", "throw {task} into the inbox", "jot down a task: {task}",
    "please add {task}", "log a task to {task}", "put {task} under the {project} project",
    "is there a task for {task}?", "when did I schedule {task}?", "what's left on {project}",
    "the next thing for {project}?", "what's my to-do list look like",
    "rappelle-moi de {task} demain", "ajoute une tâche : {task}", "qu'est-ce que j'ai à faire aujourd'hui",
    "erinnere mich morgen daran, {task}", "was steht heute an", "füge eine Aufgabe hinzu: {task}",
    "recuérdame {task} mañana", "añade una tarea: {task}", "qué tengo pendiente hoy",
]
T["review"] = [
    'what did I get through last week',
    'look back at my week',
    'my last week in numbers',
    'how much time went to {project}',
    'show my time log for the week',
    'what did I spend most time on this month',
    'hours clocked on {project} since Monday',
    'what was done in {month}',
    'what did I wrap up yesterday',
    'recap of the past month',
    'my accomplishments this week',
    'how did my {month} go',
    'time per tag this week',
    'what did I do the day before yesterday',
    'how busy was I last week',
    "what did I do last week", "what did I get done yesterday", "my week",
    "how was my week", "show me my week", "review my month", "what did I accomplish in {month}",
    "how much time did I spend on {project} this month", "how many hours went into {project} last week",
    "time spent on {project} this week", "how many tasks did I close last week",
    "what did I finish this month", "summarise my last seven days", "what have I been doing lately",
    "give me a recap of last week", "what did I work on on Monday", "my month in review",
    "how did I spend my time this week", "where did my time go last week", "clocked hours this week",
    "how much did I clock on {project} in {month}", "what did I complete in the last two weeks",
    "weekly review", "let's do the weekly review", "start my weekly review",
    "what did I do on {project} last month", "a summary of what I did yesterday",
    "how productive was I this week", "what got done today", "show my activity for {month}",
    "how many pomodoros on {project} this week", "review last week", "what have I done since Monday",
    "what did I achieve this quarter", "time report for {month}", "my hours on {project}",
    "how long did I work on {project} yesterday", "which projects took most of my time this month",
    "what did I close out in {month}", "recap my day", "what did I do this morning",
    "daily review", "monthly review for {month}", "how did last week go",
    "show what I completed last week", "hours per project this month", "what was my week like",
    "qu'est-ce que j'ai fait la semaine dernière", "combien de temps ai-je passé sur {project} ce mois-ci",
    "was habe ich letzte Woche gemacht", "wie viel Zeit habe ich diesen Monat für {project} gebraucht",
    "qué hice la semana pasada", "cuánto tiempo dediqué a {project} este mes",
]
T["shell"] = [
    'how many lines in {file}',
    'show me {file}',
    "what's listening on port 3000",
    'check if ripgrep is installed',
    'how much space does {dir} take',
    'which process uses the most memory',
    'tar up {dir}',
    'find all python files in {dir}',
    'list the biggest files in {dir}',
    'count the words in {file}',
    "what's at the top of {file}",
    'output the last lines of {file}',
    'show the line count for every file in {dir}',
    'look at the end of {file}',
    'dump {file} to the screen',
    'how many files does {dir} contain',
    'is docker running',
    "what's the load average",
    'show disk free space',
    'which branch am I on',
    'what changed since the last commit',
    'list the git tags',
    'number of lines in {file}',
    'print the contents of {file}',
    'give me a line count of {file}',
    'read out {file} for me',
    'search for TODO comments in {dir}',
    'which ports are open',
    "what's the os version",
    'check the python version',
    "run {cmd}", "execute {cmd}", "count the lines in {file}", "how many lines does {file} have",
    "print {file}", "show me the contents of {file}", "cat {file}", "display {file}",
    "list the files in {dir}", "what's in {dir}", "how big is {dir}", "how much disk space is left",
    "check the disk usage", "how much memory is free", "what processes are running",
    "show the last 20 lines of {file}", "tail the log", "what's the current git branch",
    "show uncommitted changes", "show the git log", "what's my ip address", "how long has the machine been up",
    "find files named {file} in {dir}", "search {dir} for the word TODO", "grep for error in {file}",
    "make a zip of {dir}", "compress {dir}", "delete the temp files in {dir}",
    "create a folder called backups", "rename {file} to old-{file}", "copy {file} to {dir}",
    "what version of python is installed", "which node version do I have", "install ripgrep",
    "restart the docker container", "is nginx running", "kill the process on port 8080",
    "start the dev server", "run the tests", "build the project", "run make", "execute the backup script",
    "word count of {file}", "sort {file} and remove duplicates", "show the first ten lines of {file}",
    "check the permissions on {file}", "make {file} executable", "what's the size of {file}",
    "when was {file} last modified", "diff {file} against the last commit", "show the cpu load",
    "who am I logged in as", "what's the hostname", "ping the router", "list docker containers",
    "show open ports", "what time is it on this machine", "show environment variables",
    "checksum of {file}", "how many files are in {dir}", "find the biggest files in {dir}",
    "pull the latest changes", "commit everything with message wip", "push the branch",
    "lance les tests", "affiche le contenu de {file}", "zeig mir die Dateien in {dir}",
    "führe die Tests aus", "ejecuta las pruebas", "muestra los procesos",
]
T["web"] = [
    'check online whether {tech} is released',
    'search for the {tech} documentation online',
    'look up {topic} on the internet',
    'find out online what {tech} costs',
    'google the {place} weather',
    "what's happening in {place} today",
    'the latest on {tech}',
    'is there news about {tech}',
    'online reviews of {tech}',
    'look on the web for {topic} tips',
    'find the current version of {tech} online',
    'search the net for {topic}',
    'what does the internet say about {tech}',
    'check the website of {tech}',
    'find the {tech} release date online',
    'search for {topic} articles published this week',
    'web: {topic}',
    'look online for a {topic} guide',
    "what's {tech}'s latest release? look it up online",
    'is it raining in {place} right now',
    "search the web for {tech} reviews", "google {tech}", "look up {tech} online",
    "what's the weather in {place}", "weather forecast for {place} tomorrow",
    "what's the latest news on {tech}", "is {tech} out yet? check online",
    "find the release notes for {tech} online", "what's the current price of bitcoin",
    "look up the opening hours of the {place} museum", "search online for a {topic} tutorial",
    "find reviews of {tech} and check online", "what are people saying about {tech} online",
    "browse for cheap flights to {place}", "what's the exchange rate from euro to yen",
    "find the official docs for {tech}", "search for recent papers on {topic}",
    "who won the match last night", "latest headlines", "what's trending today",
    "look up the population of {place}", "check online whether {tech} supports arm",
    "find a recipe for {topic} on the internet", "get me the wikipedia article on {topic}",
    "search the internet for {topic}", "what time does the {place} station open? look it up",
    "is the {tech} website down", "what is the newest version of {tech}", "stock price of apple",
    "fetch the page about {tech}", "web search {topic}", "look {tech} up on the web",
    "what are the reviews saying about {tech}", "check the internet for {topic} events in {place}",
    "find me a {topic} course online", "any news about {place} today", "search for {tech} benchmarks",
    "how much does {tech} cost? search online", "find the changelog of {tech} on github",
    "cherche sur internet {topic}", "quel temps fait-il à {place}", "such im Internet nach {tech}",
    "wie ist das Wetter in {place}", "busca en internet {topic}", "qué tiempo hace en {place}",
]
T["recollect"] = [
    'the time you and I worked through {past}',
    'that thing {vague} where we sorted out {past}',
    'find our conversation from {month} about {past}',
    'we were debugging {past}, when was that',
    'what was the command we used for {past}',
    'which commit fixed {past}',
    'we once had a go at {past}',
    'in which session did we touch {past}',
    'you helped me with {past} once, what did we do',
    'there was this one session on {past}',
    'it was {vague}, something to do with {past}',
    'the chat where {past} finally worked',
    'what did we try first for {past}',
    'which of our sessions mentioned {past}',
    "I'm trying to find a past session about {past}",
    'look back at when we handled {past}',
    'what did we land on for {past} {vague}',
    'we discussed this {vague}: {past}',
    'sometime in {month} we changed {past}',
    'which codex session was about {past}',
    'our session on {past} from {month}',
    'when did we work on {past} last',
    'pull up the session where we fixed {past}',
    'what was the reasoning behind {past} that time',
    'the session with {person} about {past}',
    'I recall we solved {past} somehow',
    'we had a long session about {past}, find it',
    'what was the outcome of our {past} discussion',
    'that conversation about {past} around {month}',
    'which session had the fix for {past}',
    "remember when we worked on {past}", "which session was about {past}",
    "it was sometime in {month}, we fixed {past}", "a session about {past}",
    "the conversation where we discussed {past}", "we talked about {past} {vague}",
    "what did we decide about {past} back then", "that time we debugged {past}",
    "there was a chat about {past} {vague}", "find the session where you helped me with {past}",
    "what was that thing we did with {past}", "we figured out {past} {vague}, how did we do it",
    "I think we solved {past} {vague}", "the one where we looked at {past}",
    "when did we last touch {past}", "which conversation had {past} in it",
    "bring back our discussion about {past}", "can you find our old chat on {past}",
    "I vaguely remember {past} {vague}", "do you recall {past}", "that session {vague} about {past}",
    "what did you suggest for {past} last time", "we had a session on {past}, which one",
    "{past}, {vague}", "{past} was {vague}, I think", "it was around {month}, something about {past}",
    "the commit where we changed {past}", "which day did we work on {past}",
    "where did we leave {past}", "what was our fix for {past}", "the {past} session",
    "we went through {past} together {vague}", "that discussion with {person} about {past}",
    "what did {person} and I figure out about {past}", "a while back we sorted {past}",
    "I can't remember which session had {past}", "was it in {month} that we did {past}",
    "tu te souviens de {past}", "la session sur {past} il y a quelques semaines",
    "weißt du noch, {past}", "wir hatten {vague} über {past} gesprochen",
    "te acuerdas de {past}", "hablamos de {past} hace unos meses",
]
T["chat"] = [
    "that's all for now",
    'no, leave it',
    'forget about it',
    'actually never mind',
    'scratch that',
    "don't bother",
    'not needed anymore',
    'that will be all',
    'ok, thanks anyway',
    'cancel, I changed my mind',
    "what's your name",
    'are you a robot',
    "how's it going",
    'write me a limerick about {topic}',
    'suggest a title for my essay on {topic}',
    "what's a synonym for happy",
    'how do you say thank you in Japanese',
    'give me a pep talk',
    'explain the difference between affect and effect',
    'what are the rules of chess',
    'write a short poem for {person}',
    'help me word an apology to {person}',
    'make this sentence shorter: we are going to be late',
    'what year did the Berlin wall fall',
    'how many continents are there',
    'why do we dream',
    'solve 3x + 5 = 20',
    "what's a good stretch for back pain",
    'recommend a movie',
    "I'm bored",
    "{qworld}", "{qworld}?", "hello", "hi there", "good morning", "thanks", "thank you so much",
    "never mind", "forget it", "no thanks, that's all", "ok cool", "that's enough for now",
    "stop", "cancel that", "nah, leave it", "not now", "that's fine", "I'm done", "bye",
    "see you later", "how are you", "what can you do", "who are you", "tell me a joke",
    "write a haiku about {topic}", "help me phrase this email more politely",
    "give me three gift ideas for {person}", "translate 'good night' into Italian",
    "explain {topic} like I'm five", "what do you think about {topic}", "define serendipity",
    "let's brainstorm names for a cat", "can you proofread this sentence: their going home",
    "what's 17 times 23", "convert 5 miles to kilometres", "summarise the plot of Hamlet",
    "is it better to rent or buy", "what should I cook tonight", "cheer me up",
    "ignore that last one", "oops wrong window", "no", "yes", "hmm", "great job",
    "you're wrong about that", "why did you say that", "can you be more concise",
    "bonjour", "merci beaucoup", "laisse tomber", "hallo, wie geht's", "danke", "vergiss es",
    "hola", "gracias", "olvídalo", "explique-moi la relativité", "erklär mir Photosynthese",
    "explícame qué es un agujero negro",
]
T["foundry"] = [
    'create a folder project for {newproj}',
    "I'd like a fresh repo for {newproj}",
    'set up the skeleton of a new app called {slug}',
    'initialize a git repo for {newproj}',
    'make a new directory project named {slug}',
    'start me a project for {newproj}',
    'scaffold a new {project} project',
    "create a new project for {newproj}", "start a project called {slug}", "scaffold {newproj}",
    "set up a new repo for {newproj}", "bootstrap a project for {newproj}",
    "initialise a project named {slug}", "new project: {slug}", "make me a project skeleton for {newproj}",
    "spin up a fresh workspace for {newproj}", "I want to start a new project on {topic}",
    "lay out a folder structure for {newproj}", "generate a project directory for {newproj}",
    "create a repository for {newproj}", "kick off a new project: {slug}",
    "start a new rust crate called {slug}", "scaffold a python package named {slug}",
    "set up the project folder for {newproj} with a readme", "begin a project about {topic}",
    "open a new project for {newproj}", "create project {slug}", "new repo {slug}",
    "please scaffold a web app called {slug}", "could you set up a project for {newproj}",
    "make a new project for the {project}", "start a fresh project for {newproj} with tests",
    "crée un nouveau projet appelé {slug}", "leg ein neues Projekt namens {slug} an",
    "crea un proyecto nuevo llamado {slug}",
]
T["skill-creator"] = [
    'add a new skill so you can {skillinf}',
    'I want a skill that {skill}',
    'make yourself a skill to {skillinf}',
    'build a new tool for yourself that {skill}',
    'write yourself a skill: {skillinf}',
    'create a new agent skill that {skill}',
    'program a skill which {skill}',
    "create a skill that {skill}", "write a new skill that {skill}", "build a skill which {skill}",
    "make a skill to {skillinf}", "teach yourself to {skillinf}", "learn how to {skillinf}",
    "I want you to learn to {skillinf}", "add a capability that {skill}", "new skill: {skillinf}",
    "give yourself the ability to {skillinf}", "design a skill that {skill}",
    "draft a skill for {topic}", "can you create a skill that {skill}",
    "please write a skill which {skill}", "extend yourself with a skill that {skill}",
    "create an automation that {skill}", "make yourself able to {skillinf}",
    "build me a plugin that {skill}", "could you develop a skill to {skillinf}",
    "generate a skill that {skill}", "write code for a new skill that {skill}",
    "add a new ability: {skillinf}", "from now on, learn to {skillinf}",
    "crée une compétence qui {skill}", "apprends à {skillinf}",
    "erstelle einen Skill, der {skill}", "crea una habilidad que {skill}",
]

# Hand-written lines that templates do not produce (negatives and odd registers).
EXTRA: dict[str, list[str]] = {
    "notes": ["what skills did I say I want to learn?", "what are my tips for better sleep",
              "my tips about running in the heat", "do I have a note on skill-building",
              "what project ideas have I noted", "list the books I noted this year",
              "what did I write in my journal yesterday", "sourdough hydration",
              "that note about the ferry times", "my packing list", "zettelkasten method",
              "what did I decide in my notes about the car", "what's my note on tipping in Japan",
              "anything on backups in the memex?", "what did the meeting notes from Tuesday say",
              "what are my best tips for interviews?", "which skills do my notes say I lack",
              "what did I write about learning to skate", "find the note titled Caching strategies",
              "show me the headings under Reading", "what do I have on creating habits"],
    "gtd": ["add oat milk to my inbox", "capture this: look into solar panels",
            "put 'renew passport' in the inbox", "inbox this: ask about the lease",
            "get that on my list please", "just finished the report, mark it done",
            "cancel the dentist thing", "push the gym to next week",
            "what am I still waiting to hear back about", "any errands I can do on the way home?",
            "what are my open tasks at work", "what's next on the garden project",
            "which tasks have no date", "what should I do first today",
            "I have to send the forms by Friday", "deadline for the grant is the 30th",
            "set an effort of two hours on the slides", "bump the taxes to priority A",
            "mark the NAS thing as waiting", "note on the car service task: they called back"],
    "review": ["what have I been up to", "what did I do over the weekend",
               "how did I use my time in the last fortnight", "time tracking summary",
               "show me my clocked time", "how much did I work this week"],
    "shell": ["how many lines are in that csv", "print the hosts file", "show me main.py",
              "what's eating my disk", "is port 5432 open", "show me the running services",
              "list everything in here", "how much RAM do I have", "what's taking the cpu",
              "show me the diff", "open a terminal and list the files"],
    "web": ["check online", "look it up", "can you google that", "search it on the internet",
            "what's new with the mars mission", "news about the election",
            "any updates on the train strike? check online", "latest firefox version",
            "find the bus timetable online", "current temperature outside"],
    "recollect": ["which session was it", "it was sometime in spring", "the session about the bug",
                  "we did this before, didn't we", "we had the same problem once",
                  "what did we end up choosing back then", "that chat we had about fonts",
                  "when did we talk about the pricing", "which conversation was that in",
                  "the thing from last month with the export"],
    "chat": ["nope", "never mind, it's fine", "forget I asked", "you can ignore that",
             "all good", "cool thanks", "lol", "that's not what I meant", "go on", "tell me more",
             "sounds good", "perfect", "drop it", "skip it", "no need", "dismiss"],
    "foundry": ["I'd like a new project folder for the garden plan", "set up a repo for it",
                "new project", "scaffold it as a node app"],
    "skill-creator": ["teach yourself to read my calendar", "I want a skill for logging water intake",
                      "make a new skill", "write a skill for me",
                      "learn to file my bills automatically"],
}

# -- noise ---------------------------------------------------------------------------------------
OPENERS = ["", "", "", "", "please ", "can you ", "could you ", "hey, ", "ok ", "quick one: ",
           "I'd like you to ", "um, "]


def _typo(rng: random.Random, s: str) -> str:
    words = s.split()
    cand = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha()]
    if not cand:
        return s
    i = rng.choice(cand)
    w = words[i]
    j = rng.randrange(1, len(w) - 2)
    words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)


def _noisy(rng: random.Random, s: str, target: str) -> str:
    r = rng.random()
    if r < 0.15 and target not in ("chat",) and not s.lower().startswith(("what", "which", "how",
                                                                           "who", "when", "is ")):
        s = rng.choice(OPENERS) + s
    if rng.random() < 0.12:
        s = _typo(rng, s)
    r = rng.random()
    if r < 0.2:
        s = s.lower()
    elif r < 0.35:
        s = s[:1].upper() + s[1:]
    if rng.random() < 0.2:
        s = s.rstrip("?.!") + rng.choice(["?", ".", "!", ""])
    return s.strip()


def _fill(rng: random.Random, template: str) -> str:
    month = rng.choice(MONTHS)
    slots = {
        "topic": rng.choice(TOPICS), "task": rng.choice(TASKS), "when": rng.choice(WHENS),
        "person": rng.choice(PEOPLE), "project": rng.choice(PROJECTS), "tag": rng.choice(TAGS),
        "file": rng.choice(FILES), "dir": rng.choice(DIRS), "tech": rng.choice(TECH),
        "place": rng.choice(PLACES), "month": month, "past": rng.choice(PAST_WORK),
        "vague": rng.choice(VAGUE).format(month=month), "qworld": rng.choice(QUESTIONS_WORLD),
        "newproj": rng.choice(NEWPROJ), "slug": rng.choice(["budget-tracker", "logtail",
                                                            "recipe-box", "garden-planner",
                                                            "thesis", "pi-weather", "inkwell"]),
        "cmd": rng.choice(["git status", "make test", "ls -la", "df -h", "the test suite",
                           "pytest -q", "npm install", "the deploy script", "cargo build",
                           "docker ps", "du -sh .", "uptime"]),
    }
    skill = rng.choice(SKILLS)
    slots["skill"] = skill
    slots["skillinf"] = " ".join([_infinitive(skill.split()[0]), *skill.split()[1:]])
    return template.format(**slots)


def _infinitive(verb: str) -> str:
    for s, r in (("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("es", "e"), ("s", "")):
        if verb.endswith(s) and verb not in ("summarises",):
            return verb[: -len(s)] + r
    return verb.replace("summarises", "summarise")


def generate(seed: int = 16) -> list[dict[str, str]]:
    """Rows ``{"text", "target"}``: PER_TARGET distinct utterances per target, deterministic."""
    rng = random.Random(seed)
    rows: list[dict[str, str]] = []
    for target, templates in T.items():
        seen: set[str] = set()
        texts: list[tuple[str, str]] = []
        for n, extra in enumerate(EXTRA.get(target, [])):
            if extra.lower() not in seen:
                seen.add(extra.lower())
                texts.append((extra, f"{target}:x{n}"))
        numbered = list(enumerate(templates))
        for n, template in itertools.islice(itertools.cycle(numbered), PER_TARGET * 30):
            if len(texts) >= PER_TARGET:
                break
            s = _noisy(rng, _fill(rng, template), target)
            if s.lower() not in seen:
                seen.add(s.lower())
                texts.append((s, f"{target}:t{n}"))
        # "group" names the template (or hand-written line) a row came from, so that
        # cross-validation can hold out whole phrasings, not just other fillings of them
        rows += [{"text": t, "target": target, "group": g} for t, g in texts]
    return rows


def main() -> int:
    rows = generate()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["target"]] = counts.get(r["target"], 0) + 1
    print(json.dumps({"file": str(OUT), "version": VERSION, "rows": len(rows), "per_target": counts}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
