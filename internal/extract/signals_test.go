package extract

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/episode"
)

// userInput is an exchange where the user said text and the assistant
// answered "OK.".
func userInput(text string) Input {
	return Input{Blocks: []Block{
		{Role: "user", Kind: "text", Text: text},
		{Role: "assistant", Kind: "text", Text: "OK."},
	}}
}

// sig renders a signal compactly for comparisons:
// kind:subject[>object]:±[G].
func sig(s episode.Signal) string {
	var b strings.Builder
	b.WriteString(s.Kind + ":" + s.Subject)
	if s.Object != "" {
		b.WriteString(">" + s.Object)
	}
	if s.Polarity < 0 {
		b.WriteString(":-")
	} else {
		b.WriteString(":+")
	}
	if s.Global {
		b.WriteString("G")
	}
	return b.String()
}

func sigs(ss []episode.Signal) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, sig(s))
	}
	return out
}

func extractSignals(t testing.TB, in Input) []string {
	t.Helper()
	d, err := NewLocal().Extract(context.Background(), in)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	return sigs(d.Signals)
}

// TestSignalPatterns covers each pattern family of the rule scan with what
// it must find and what it must leave alone: the rules alone. What the
// learned reading makes of the same sentences (drops, adds, scopes) is
// measured on the speech corpus, whose tune/unit-* sources hold them.
func TestSignalPatterns(t *testing.T) {
	tests := []struct {
		family string
		text   string
		want   []string
	}{
		// Preferences.
		{"preference", "I prefer table-driven tests", []string{"preference:table-driven test:+G"}},
		{"preference", "I really prefer small functions.", []string{"preference:small function:+G"}},
		{"preference", "I like Tailwind", []string{"preference:tailwind:+G"}},
		{"preference", "I'd rather use tabs", []string{"preference:tab:+G"}},
		{"preference", "always use pnpm please", []string{"preference:pnpm:+G"}},
		{"preference", "Please always run go vet before committing.", []string{"preference:go vet before committing:+G"}},
		{"preference", "we use table-driven tests for Go", []string{"preference:table-driven test>go:+"}},
		{"preference", "pnpm is my go-to", []string{"preference:pnpm:+G"}},
		{"preference", "Ruff is our go-to", []string{"preference:ruff:+"}},
		{"preference", "make sure to use early returns", []string{"preference:early return:+G"}},
		{"preference", "I prefer pytest, black and ruff", []string{"preference:pytest:+G", "preference:black:+G", "preference:ruff:+G"}},
		{"preference", "don't forget to run go vet", []string{"preference:go vet:+G"}},
		{"preference", "Can you always use early returns?", []string{"preference:early return:+G"}},
		{"preference", "Always run `go test -race ./...` before you tell me something works.",
			[]string{"preference:go test -race ./...:+G"}},
		{"preference", "Only use the standard library.", []string{"preference:standard library:+G"}},
		{"preference", "Keep using zerolog for logs.", []string{"preference:zerolog>log:+G"}},
		{"preference (comparative)", "I usually prefer fewer, larger files.", []string{}},
		{"preference (question)", "should we always use X?", []string{}},
		{"preference (question)", "Do you prefer tabs?", []string{}},
		{"preference (hedge)", "we could always use redis", []string{}},
		{"preference (condition)", "if you prefer mocks, fine", []string{}},
		// An infinitive of purpose is what the task asks about, no rule;
		// after a word of wanting, trying or judging it is the user's.
		{"preference (purpose)", "Explain how to use pnpm in this repo.", []string{}},
		{"preference (purpose)", "Enumerate solutions to keep code compact and in a single file.", []string{}},
		{"avoid (purpose)", "Show me ways to avoid deadlocks.", []string{}},
		{"preference (rule to)", "Remember to keep functions small.", []string{"preference:small function:+G"}},
		{"preference (rule to)", "It's important to keep commits small.", []string{"preference:small commit:+G"}},
		{"avoid (rule to)", "Try to avoid global state.", []string{"avoid:global state:-G"}},
		// "always"/"never" after a noun phrase set off by a comma says what
		// that subject does; after a phrase of place, or a verb, it is a rule.
		{"preference (subject)", "Works of art, regardless of their theme or object, always carry a piece of reality.", []string{}},
		{"avoid (subject)", "Large pull requests, in my experience, never get reviewed well.", []string{}},
		{"preference (scope)", "In this repo, never commit to main.", []string{"avoid:commit to main:-"}},
		{"preference (scope)", "Going forward, always use pnpm.", []string{"preference:pnpm:+G", "decision:pnpm:+G"}},
		{"preference (vocative)", "Claude, always use pnpm.", []string{"preference:pnpm:+G"}},
		// "only" after coordinated items holds for all of them, not the last.
		{"preference (only)", "- Python 3.7.9 with tkinter and internal modules only.", []string{}},
		{"preference (only)", "I strongly prefer beauty products from indie or niche brands only.",
			[]string{"preference:beauty product from indie or niche brand:+G"}},
		// A task the user plans is no standing rule.
		{"preference (plan)", "I'll need to turn off the scroll bar and always show the full text.", []string{}},
		{"preference (plan)", "We will have to avoid the old endpoint for this migration.", []string{}},
		// Material to reword is not the user's word.
		{"preference (reword)", "other ways to say Works of art always carry a piece of reality", []string{}},
		{"preference (reword)", "paraphrase I like your watch", []string{}},
		// An amount of money or points, or a move in a game, changes with
		// the next turn; a fact's value cut off on a preposition says nothing.
		{"fact (balance)", "ok, i have 100 coins, my bet will be 10 coins in all the 3 races.", []string{}},
		{"fact (balance)", "I have $500 to spend on a laptop.", []string{}},
		{"fact (balance)", "my bet is 30 coins to horse 4.", []string{}},
		{"fact (situation)", "I have 2 kids and a dog.", []string{"fact:user>has 2 kids and a dog:+G"}},
		{"fact (cut off)", "The expected velocity is 42 story points per", []string{}},
		// A restrictive relative clause: "avoids restaurants" is not what
		// was said; the claim keeps the clause, and a short phrase
		// coordinated at its end.
		{"avoid (restricted)", "I strictly avoid restaurants that serve gluten.", []string{"avoid:restaurants that serve gluten:-G"}},
		{"avoid (restricted)", "never hire contractors who skip code review", []string{"avoid:hire contractors who skip code review:-G"}},
		{"avoid (restricted)", "I refuse to use any beauty products that have been tested on animals.",
			[]string{"avoid:beauty products that have been tested on animals:-G"}},
		{"avoid (restricted)", "I strictly avoid any activities that involve direct sun exposure due to a genetic skin condition.",
			[]string{"avoid:activities that involve direct sun exposure:-G"}},
		{"avoid (restricted)", "I avoid brands that test on animals or use lanolin.", []string{"avoid:brands that test on animals or use lanolin:-G"}},
		{"preference (restricted)", "I only use beauty products that are Fair Trade certified.",
			[]string{"preference:beauty products that are fair trade certified:+G"}},
		{"preference (where possible)", "always use const where possible", []string{"preference:const:+G"}},
		{"avoid (kind of)", "I have an aversion to any form of horror or survival horror games.", []string{"avoid:horror or survival horror game:-G"}},
		// A relative clause cut off by the coordination says nothing.
		{"avoid (restricted)", "I strongly dislike movies that are over two and a half hours long.", []string{}},
		{"avoid (restricted)", "I avoid any activities that could potentially cause head trauma.", []string{}},
		{"avoid (objection)", "I have an ethical objection to using beauty products that contain animal-derived ingredients like beeswax or lanolin.",
			[]string{"avoid:beauty products that contain animal-derived ingredients:-G"}},
		// Stances said with other verbs, and facts opening with "an".
		{"avoid (refuse)", "I refuse to eat at chain restaurants.", []string{"avoid:eat at chain restaurant:-G"}},
		{"avoid (despise)", "I despise country music.", []string{"avoid:country music:-G"}},
		{"avoid (comfortable)", "I am not comfortable with heights.", []string{"avoid:height:-G"}},
		{"avoid (comfortable)", "I'm uncomfortable with the use of invisible fences for pets.", []string{"avoid:invisible fence>pet:-G"}},
		{"avoid (aversion)", "I have an extreme aversion to heights.", []string{"avoid:height:-G"}},
		{"fact (an)", "I have an extreme fear of the ocean and cannot go near or in the water.",
			[]string{"fact:user>has an extreme fear of the ocean:+G"}},
		{"fact (an)", "I have an idea.", []string{}},
		{"fact (an)", "I'm an idiot.", []string{}},
		// A way of living the user follows is a fact about them; how they
		// learn best a preference.
		{"fact (follow)", "I strictly follow a Kosher diet.", []string{"fact:user>follows a Kosher diet:+G"}},
		{"fact (follow)", "I follow a strict vegan diet and refuse to consume any animal-derived products, including honey.",
			[]string{"fact:user>follows a strict vegan diet:+G", "avoid:consume any animal derived product:-G"}},
		{"fact (follow)", "I follow the style guide.", []string{}},
		{"preference (learn best)", "I learn best through personalized, one-on-one instruction.",
			[]string{"preference:personalized one on one instruction:+G"}},
		// A qualifier shared by coordinated items that points back: the
		// items alone claim more than was said.
		{"avoid (qualifier points back)", "I cannot stand country music and avoid any events or venues featuring it.",
			[]string{"avoid:country music:-G"}},
		// A bare choice is the sentence's own, in a few words, of no
		// particular thing.
		{"preference (bare instead)", "fix the bug instead of adding a workaround", []string{}},
		{"preference (bare instead)", "You can use margarine or coconut oil instead of butter.", []string{}},
		{"preference (to VERB that)", "I want my kids to learn that too.", []string{}},
		// A shared head after a place or "over", and modifiers listed with
		// a comma inside a relative clause.
		{"preference (shared head, over)", "I strongly prefer electric or hybrid vehicles over traditional gasoline-powered ones.",
			[]string{"preference:electric or hybrid vehicle:+G"}},
		{"avoid (relative modifiers)", "I refuse to join any activities that involve monotonous, repetitive movements.",
			[]string{"avoid:join any activities that involve monotonous repetitive movements:-G"}},
		// Modifiers listed with a comma after a verb of taste are one noun
		// phrase; names are a list.
		{"preference (modifier comma)", "I like Go, Rust and Zig.", []string{"preference:go:+G", "preference:rust:+G", "preference:zig:+G"}},
		// And inside a phrase that qualifies the noun; a list there stays
		// a list.
		{"avoid (qualifier comma)", "I avoid vehicles with large, intrusive front grilles.",
			[]string{"avoid:vehicle with large intrusive front grille:-G"}},
		{"preference (qualifier comma)", "I prefer clothing made from organic, vegan materials.",
			[]string{"preference:clothing made from organic vegan material:+G"}},
		{"preference (qualifier list)", "I prefer clothing without leather, suede, or fur.",
			[]string{"preference:clothing:+G", "avoid:leather:-G", "avoid:suede:-G", "avoid:fur:-G"}},
		// "free of" is "without"; "gluten free" is one word.
		{"preference (free of)", "I prefer snacks free from nuts.", []string{"preference:snack:+G", "avoid:nut:-G"}},
		{"preference (free of)", "I only buy clothing free of leather, suede, and fur.",
			[]string{"preference:buy clothing:+G", "avoid:leather:-G", "avoid:suede:-G", "avoid:fur:-G"}},
		{"preference (free)", "I prefer gluten free pasta.", []string{"preference:gluten-free pasta:+G"}},
		// "I only …", "I exclusively …" with a verb of a habit.
		{"preference (only)", "I only eat organic produce.", []string{"preference:eat organic produce:+G"}},
		{"preference (only)", "I exclusively travel by train.", []string{"preference:travel by train:+G"}},
		{"preference (only)", "I exclusively use cruelty-free skincare products.", []string{"preference:cruelty-free skincare product:+G"}},
		{"preference (only)", "I only watch documentaries, never reality TV.", []string{"preference:watch documentary:+G", "avoid:reality tv:-G"}},
		{"preference (only, no habit)", "I only have two hours today.", []string{}},
		{"preference (only, no habit)", "I only need the summary.", []string{}},
		{"preference (only, shown)", "I only read it once.", []string{}},
		{"preference (only, imperative)", "only eat the leftovers", []string{}},
		// Chat pleasantries, someone else's things and how often make no
		// claim; "love X to Y" is no comparison.
		{"preference (pleasantry)", "No problem! I love to help, so just ask anytime.", []string{}},
		{"preference (pleasantry)", "That's what I like to hear!", []string{}},
		{"preference (pleasantry)", "Always good to hear! See you later!", []string{}},
		{"preference (pleasantry)", "No worries. Always here to help!", []string{}},
		{"preference (feeling)", "I always feel like I could write a whole movie out there.", []string{}},
		{"preference (someone else's)", "They made the props for the films, and I love their work.", []string{}},
		{"preference (how often)", "I'm grateful to have a job I enjoy every day.", []string{}},
		{"preference (love X to Y)", "I love hiking to the lake.", []string{"preference:hiking to lake:+G"}},
		{"preference (always love)", "I will always love reading, personally.", []string{"preference:reading:+G"}},
		{"preference (plan)", "Thanks! I'll make sure to have a safe trip.", []string{}},
		{"preference (make sure)", "Make sure to run the linter before pushing.", []string{"preference:linter before pushing:+G"}},
		{"preference (shop)", "We're planning to take a team trip next month.", []string{}},
		{"switch (particle)", "Last week I dropped off the cookies at the shelter.", []string{}},
		{"fact (no situation)", "I'm as well.", []string{}},
		{"fact (no situation)", "I'm on fire this week!", []string{}},
		{"fact (cut off)", "I'm passionate about creating a", []string{}},
		// "as" saying in which role a thing is meant belongs to it.
		{"avoid (as)", "I'm not a fan of fish as pets.", []string{"avoid:fish as pet:-G"}},
		{"avoid (as)", "I despise running as a form of exercise.", []string{"avoid:running as form of exercise:-G"}},
		{"avoid (as reason)", "I avoid dairy as I'm lactose intolerant.", []string{"avoid:dairy:-G"}},
		{"preference (as well)", "I like pytest as well.", []string{"preference:pytest:+G"}},
		// Examples after a noun phrase stay in the quote, not the item.
		{"avoid (examples)", "I strongly dislike wearing animal-based fabrics like leather or wool.", []string{"avoid:wearing animal-based fabric:-G"}},
		{"preference (examples)", "I prefer alternatives like faux leather or fabric.", []string{"preference:alternatives like faux leather:+G"}},
		// A mood is how the user feels now; encouragement and what a thing
		// does are no habits of theirs.
		{"fact (mood)", "I'm super proud of what I accomplished.", []string{}},
		{"fact (mood)", "I'm always here for you!", []string{}},
		{"fact (mood)", "I'm definitely going to check it out.", []string{}},
		{"avoid (encouragement)", "Keep going and never give up!", []string{}},
		{"avoid (encouragement)", "Don't quit, remember, failures lead you closer to success.", []string{}},
		{"avoid (third person)", "It's my favorite and never gets old.", []string{}},
		{"avoid (plain form)", "never use var", []string{"avoid:var:-G"}},
		{"preference (into)", "I'm into the second chapter now.", []string{}},
		// A reaction to what is shown is no taste.
		{"preference (reaction)", "Wow, that photo's amazing! I love all the yellow leaves.", []string{}},
		{"preference (reaction)", "I really like your coconut recommendation.", []string{}},
		{"preference (reaction)", "I love the ocean.", []string{"preference:ocean:+G"}},
		{"preference (reaction)", "I love camping trips with my family.", []string{"preference:camping trip:+G"}},
		// A participle's phrase qualifies the noun as "with" does.
		{"avoid (qualified)", "I refuse to purchase clothing made from animal-derived fabrics like leather, wool, or silk.",
			[]string{"avoid:purchase clothing made from animal derived fabric:-G"}},
		{"avoid (comment)", "I avoid npm, which is slow", []string{"avoid:npm:-G"}},
		{"avoid (deny)", "There is this documentation I don't completely understand", []string{}},
		// Material after an instruction's colon is not the user's word.
		{"material", "Make this grammatically correct: I like your watch.", []string{}},
		{"preference (coordinated place)", "Always keep code compact and in a single file.", []string{"preference:compact code:+G"}},
		{"material", "Could you translate to French: I always use tabs", []string{}},
		{"material", "Remember this: I always use tabs", []string{"preference:tab:+G"}},
		{"material", "I prefer tabs: they are easier to read", []string{"preference:tab:+G"}},
		// A coordinated item with its own stance keeps it.
		{"preference (coordinated stance)", "I prefer a plant-based diet and strongly dislike animal-based supplements.",
			[]string{"preference:plant-based diet:+G", "avoid:animal-based supplement:-G"}},
		{"preference (coordinated stance)", "I avoid lodash and love ramda", []string{"avoid:lodash:-G", "preference:ramda:+G"}},
		// Coordinated modifiers share their head: one item, not a bare adjective.
		{"preference (shared head)", "I prefer interactive and gamified learning modes.",
			[]string{"preference:interactive and gamified learning mode:+G"}},
		{"avoid (shared head)", "I dislike dry, factual textbooks.", []string{"avoid:dry factual textbook:-G"}},
		{"avoid (two items)", "I avoid podcasts and long lectures", []string{"avoid:podcast:-G", "avoid:long lecture:-G"}},
		{"preference (two items)", "I prefer pytest, black and ruff.", []string{"preference:pytest:+G", "preference:black:+G", "preference:ruff:+G"}},
		{"preference (modifier cut off)", "I have a strong preference for logical and analytical approaches that break concepts down.", []string{}},
		{"preference (modifier cut off)", "I only use vegan, cruelty-free products that are not tested on animals.",
			[]string{"preference:vegan cruelty-free products that are not tested on animals:+G"}},
		// A stance said with a noun, and avoiding said with "prefer".
		{"avoid (stance noun)", "I have a strong aversion to seafood.", []string{"avoid:seafood:-G"}},
		{"preference (stance noun)", "I have a clear preference for window seats.", []string{"preference:window seat:+G"}},
		{"avoid (prefer to avoid)", "I prefer to stay away from crowded beaches.", []string{"avoid:crowded beach:-G"}},
		{"avoid (not interested)", "I am not interested in documentaries.", []string{"avoid:documentary:-G"}},
		{"avoid (anaphora)", "I skip those because I'm not interested in that genre.", []string{}},
		{"avoid (reason)", "I avoid virtual reality headsets due to motion sickness.", []string{"avoid:virtual reality headset:-G"}},
		// A coordinated clause is no item: its verb, its pronoun, or the
		// relative clause it carries on.
		{"avoid (coordinated clause)", "I dislike shooters and find them too intense.", []string{"avoid:shooter:-G"}},
		{"avoid (coordinated clause)", "I dislike mainstream brands and only support indie brands.", []string{"avoid:mainstream brand:-G"}},
		{"avoid (relative goes on)", "I dislike brands that test on animals or use beeswax in their products.", []string{"avoid:brands that test on animals:-G"}},
		// Examples of an item are held by it, and a qualifier after the
		// last item holds for the ones before it.
		{"avoid (examples)", "I strongly dislike reptiles, especially snakes and lizards.", []string{"avoid:reptile:-G"}},
		{"avoid (shared qualifier)", "I dislike shows or movies with laugh tracks.", []string{"avoid:show or movie with laugh track:-G"}},
		{"avoid (adverbial clause goes on)", "I avoid VR headsets because they make me dizzy and nauseous.", []string{"avoid:vr headset:-G"}},
		// A name keeps its own item.
		{"preference (names)", "I prefer React Query and Zustand.", []string{"preference:react query:+G", "preference:zustand:+G"}},
		// A "with" qualifier is kept: "movies" alone would claim more.
		{"avoid (qualified)", "I dislike movies with heavy use of special effects.", []string{"avoid:movie with heavy use of special effect:-G"}},
		// "avoiding" after a comma is an avoidance, whatever came before.
		{"preference (avoiding)", "I prefer minimalist fashion, avoiding loud patterns or bright colors.",
			[]string{"preference:minimalist fashion:+G", "avoid:loud pattern:-G", "avoid:bright color:-G"}},
		// A fact's noun phrase may be coordinated too.
		{"fact (coordinated)", "I have a severe peanut and tree nut allergy.", []string{"fact:user>has a severe peanut and tree nut allergy:+G"}},
		{"fact (clause)", "I'm against breeding pets and adopt from shelters.", []string{"fact:user>is against breeding pets:+G"}},
		{"fact (clause)", "I'm blind and use a screen reader", []string{"fact:user>is blind:+G"}},
		// After a comma, a phrase ending on a modifier of a noun phrase
		// that goes on into a relative clause is no item; a comma between
		// two modifiers after "from" parts no list.
		{"preference (modifier cut off)", "I prefer to buy clothing at sustainable, eco-friendly shops that pay fairly.", []string{}},
		{"preference (qualifier comma)", "I prefer to buy clothing from sustainable, eco-friendly brands that pay fairly.",
			[]string{"preference:buy clothing from sustainable eco-friendly brands that pay fairly:+G"}},
		// "no longer" of what the code or the assistant does is no switch.
		{"switch (described)", "You didn't notice? You are no longer hiding the widget, you are just setting the size.", []string{}},
		{"switch (described)", "it's no longer using the cache", []string{}},
		// A relative clause after the last item restricts the ones before,
		// and the claim keeps it.
		{"avoid (shared relative clause)", "I prefer not to watch shows or movies that are more than two hours long.",
			[]string{"avoid:watch shows or movies that are more than two hours long:-G"}},
		// A hyphenated word opening with a preposition stays whole.
		{"preference (prep compound)", "I prefer traditional, in-person classroom settings.",
			[]string{"preference:traditional in-person classroom setting:+G"}},
		// A wish about this task's object is no preference.
		{"avoid (task wish)", "i dont want to modify the stack trace or message", []string{}},
		// A pasted table is material, not the user's word.
		{"material (table)", "Add roles to this table\nStep\tTool\tNote\nDraft\tEditor\tUse data visualization tools for presenting topics.", []string{}},
		{"material (table)", "I prefer tabs.\nname\tvalue\nnever\tuse mocks", []string{"preference:tab:+G"}},
		{"preference (request)", "I'd like to add a health endpoint", []string{}},
		{"preference (remark)", "I like that you used pnpm", []string{}},
		{"preference (remark)", "I like it", []string{}},
		{"preference (description)", "it always fails on CI", []string{}},
		{"preference (reported)", "you said always use mocks", []string{}},
		{"preference (tool)", "Use the Read tool to look at main.go", []string{}},

		// Avoidance.
		{"avoid", "never use testify", []string{"avoid:testify:-G"}},
		{"avoid", "avoid global state", []string{"avoid:global state:-G"}},
		{"avoid", "always avoid global state", []string{"avoid:global state:-G"}},
		{"avoid", "I hate mocks", []string{"avoid:mock:-G"}},
		{"avoid", "I dislike ORMs", []string{"avoid:orm:-G"}},
		{"avoid", "I'd rather not use Docker here", []string{"avoid:docker:-"}},
		{"avoid", "you should never commit secrets", []string{"avoid:commit secret:-G"}},
		{"avoid", "never use mocks or stubs", []string{"avoid:mock:-G", "avoid:stub:-G"}},
		{"avoid", "never use `fmt.Println` for logging", []string{"avoid:fmt.println>logging:-G"}},
		{"avoid", "I prefer not to use generics", []string{"avoid:generic:-G"}},
		{"avoid", "I'm not a fan of long functions.", []string{"avoid:long function:-G"}},
		{"avoid (narrative)", "I never said that", []string{}},
		{"avoid (narrative)", "It never worked", []string{}},
		{"avoid (narrative)", "I've never used Rust", []string{}},
		{"avoid (idiom)", "Never mind", []string{}},
		{"avoid (idiom)", "don't worry about it", []string{}},
		{"avoid (idiom)", "I don't know", []string{}},
		{"avoid (idiom)", "we don't need that", []string{}},
		{"avoid (idiom)", "no worries", []string{}},
		{"avoid (idiom)", "no errors in the build", []string{}},
		{"avoid (description)", "it doesn't use mocks", []string{}},
		{"avoid (question)", "why don't we use X?", []string{}},

		// Switches.
		{"switch", "switch from npm to pnpm", []string{"switch:npm>pnpm:-", "preference:pnpm:+"}},
		{"switch", "we migrated from npm to pnpm", []string{"switch:npm>pnpm:-", "preference:pnpm:+"}},
		{"switch", "I moved from vim to neovim last year", []string{"switch:vim>neovim:-G", "preference:neovim:+G"}},
		{"switch", "I switched to neovim", []string{"switch:>neovim:-G", "preference:neovim:+G"}},
		{"switch", "stop using mocks", []string{"switch:mock:-"}},
		{"switch", "we stopped using jest", []string{"switch:jest:-"}},
		{"switch", "replace jest with vitest", []string{"switch:jest>vitest:-", "preference:vitest:+"}},
		{"switch", "instead of npm, use pnpm", []string{"preference:pnpm:+G", "avoid:npm:-G"}},
		{"switch (place)", "switch to the main branch", []string{}},
		{"switch (place)", "move to the next step", []string{}},
		{"switch (negated)", "we didn't switch from npm to pnpm", []string{}},
		{"switch (not a verb)", "stop the server", []string{}},

		// Corrections.
		{"correction", "no", []string{"correction::-"}},
		{"correction", "nope", []string{"correction::-"}},
		{"correction", "That's wrong.", []string{"correction::-"}},
		{"correction", "that is not right", []string{"correction::-"}},
		{"correction", "You're wrong, it returns an error", []string{"correction::-"}},
		{"correction", "Actually, the port is 8080", []string{"correction:port>8080:+", "fact:port>8080:+"}},
		{"correction", "not npm but pnpm", []string{"correction:pnpm>npm:+"}},
		{"correction", "Hmm, no. Use the builder pattern.", []string{"correction:builder pattern:+"}},
		{"correction", "Wrong file. I meant internal/store/captures.go", []string{"correction:internal/store/captures.go>file:+"}},
		{"correction", "That's wrong. The config lives in ~/.config/engram/config.toml",
			[]string{"correction:config>~/.config/engram/config.toml:+", "fact:config>~/.config/engram/config.toml:+"}},
		{"correction", "Nope. The timeout should be 5 seconds, not 30.", []string{"correction::-"}},
		{"correction (polite)", "no, thanks", []string{}},
		{"correction (polite)", "No problem, please continue", []string{}},
		{"correction (not)", "I'm not sure but I think it works", []string{}},
		{"correction (actually)", "It actually works now", []string{}},

		// Decisions.
		{"decision", "let's go with Postgres", []string{"decision:postgres:+"}},
		{"decision", "go with option B", []string{"decision:option b:+"}},
		{"decision", "The plan is to ship on Friday", []string{"decision:ship on friday:+"}},
		{"decision", "we decided not to use an ORM", []string{"decision:orm:-"}},
		{"decision", "let's not use an ORM", []string{"decision:orm:-"}},
		{"decision", "we decided to stop using mocks", []string{"decision:mock:-", "switch:mock:-"}},
		{"decision", "From now on, run gofmt before committing.", []string{"decision:gofmt before committing:+"}},
		{"decision", "From now on, always use pnpm.", []string{"preference:pnpm:+G", "decision:pnpm:+G"}},
		{"decision (question)", "should we go with Postgres?", []string{}},
		{"decision (task)", "let's add a health endpoint", []string{}},

		// Facts.
		{"fact", "our API runs on port 8080", []string{"fact:api>port 8080:+"}},
		{"fact", "the password is [REDACTED:password]", []string{"fact:password>[REDACTED:password]:+"}},
		{"fact", "The config lives in ~/.config/engram/config.toml", []string{"fact:config>~/.config/engram/config.toml:+"}},
		{"fact", "the deploy script is at scripts/deploy.sh", []string{"fact:deploy script>scripts/deploy.sh:+"}},
		{"fact", "Docs are at https://example.com/docs", []string{"fact:doc>https://example.com/docs:+"}},
		{"fact (abstract)", "the problem is that tests fail", []string{}},
		{"fact (state)", "the tests are failing on CI", []string{}},
		{"fact (state)", "the server is down", []string{}},
		{"fact (question)", "what is the port?", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.family+"/"+tt.text, func(t *testing.T) {
			d, err := NewReading(nil, nil).Extract(context.Background(), userInput(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			if got := sigs(d.Signals); !slices.Equal(got, tt.want) {
				t.Errorf("Extract(%q).Signals=%v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

// TestReadingWhereRulesWent: the rules dropped because they earned less
// than they cost on the speech corpus ("don't X", "use X", "I want X", "X
// instead of Y", …) leave these sentences to the learned reading; the
// default extractor (the committed lexical model, no sentence vectors)
// still reads them, with the rule's polarity. The corpus's tune/unit-*
// sources hold them with their labels.
func TestReadingWhereRulesWent(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"I want you to always use pnpm.", []string{"preference:pnpm:+G"}},
		{"use pnpm here, never npm", []string{"preference:pnpm:+", "avoid:npm:-"}},
		{"I don't want to use semicolons", []string{"avoid:semicolon:-G"}},
		{"don't use testify", []string{"avoid:testify:-G"}},
		{"I don't like testify", []string{"avoid:testify:-G"}},
		{"no mocks please", []string{"avoid:mock:-G"}},
		{"Please don't add comments", []string{"avoid:comment:-G"}},
		{"dont use var, use const", []string{"avoid:var:-G", "preference:const:+G"}},
		{"I dislike small dogs, such as chihuahuas, and prefer larger breeds.", []string{"avoid:small dog:-G", "preference:larger breed:+G"}},
		// A correction that opens on its negation installs the avoidance.
		{"No, don't use mocks", []string{"correction:mock:-G"}},
	}
	for _, tt := range tests {
		if got := extractSignals(t, userInput(tt.text)); !slices.Equal(got, tt.want) {
			t.Errorf("Extract(%q).Signals=%v, want %v", tt.text, got, tt.want)
		}
	}
}

// TestSubjectEquivalence checks that one preference said in different
// words gets one Subject, so that three episodes make a belief.
func TestSubjectEquivalence(t *testing.T) {
	classes := []struct {
		kind    string
		subject string
		texts   []string
	}{
		{episode.SignalPreference, "table-driven test", []string{
			"I prefer table-driven tests",
			"Please always write table driven tests.",
			"we use table-driven tests for Go",
			"Make sure to use table-driven tests.",
		}},
		{episode.SignalAvoid, "testify", []string{
			"never use testify",
			"don't use testify",
			"I don't like testify",
			"Avoid `testify`.",
			"no testify please",
		}},
		{episode.SignalPreference, "pnpm", []string{
			"I prefer pnpm",
			"always use pnpm please",
			"pnpm is my go-to",
			"we use pnpm for package management",
		}},
		{episode.SignalPreference, "tab", []string{
			"I'd rather use tabs",
			"make sure to use tabs",
			"I like tabs in this repo",
		}},
		{episode.SignalAvoid, "mock", []string{
			"avoid mocks",
			"no mocks please",
			"I hate mocks",
		}},
		{episode.SignalSwitch, "mock", []string{
			"Don't use mocks anymore.",
			"we no longer use mocks",
		}},
		{episode.SignalDecision, "postgres", []string{
			"let's go with Postgres",
			"we decided to use PostgreSQL",
			"We'll use postgres for the store",
		}},
		{episode.SignalPreference, "early return", []string{
			"Always use early returns.",
			"I prefer early-returns",
			"please use early returns for error handling",
		}},
	}
	for _, c := range classes {
		for _, text := range c.texts {
			d, err := NewLocal().Extract(context.Background(), userInput(text))
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, s := range d.Signals {
				if s.Kind == c.kind && s.Subject == c.subject {
					found = true
				}
			}
			if !found {
				t.Errorf("Extract(%q).Signals=%v, want a %s on %q", text, sigs(d.Signals), c.kind, c.subject)
			}
		}
	}
}

// TestSwitchEquivalence: the same switch in three phrasings.
func TestSwitchEquivalence(t *testing.T) {
	want := []string{"switch:npm>pnpm:-", "preference:pnpm:+"}
	for _, text := range []string{"switch from npm to pnpm", "We migrated from npm to pnpm.", "replace npm with pnpm"} {
		if got := extractSignals(t, userInput(text)); !slices.Equal(got, want) {
			t.Errorf("Extract(%q).Signals=%v, want %v", text, got, want)
		}
	}
}

// TestNegationNeverFlips: a negated preference never comes out as +1 on
// its subject.
func TestNegationNeverFlips(t *testing.T) {
	texts := []string{
		"I don't like testify",
		"I do not like testify.",
		"I don't really like testify",
		"I don't prefer testify",
		"I never want testify",
		"I don't want testify in my tests",
		"don't always use testify",
		"we don't use testify",
		"We never use testify for mocks",
		"not testify but the standard library",
		"I never said I prefer testify",
		"I'd rather not use testify",
		"don't use testify for new tests",
		"Please stop using testify.",
		"no testify please",
		"you shouldn't use testify",
	}
	for _, text := range texts {
		d, err := NewLocal().Extract(context.Background(), userInput(text))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range d.Signals {
			if s.Subject == "testify" && s.Polarity > 0 && s.Kind != episode.SignalCorrection {
				t.Errorf("Extract(%q).Signals=%v: +1 on testify", text, sigs(d.Signals))
			}
		}
	}
}

// TestNotScanned: code, quotes, questions and the assistant's own
// preferences give no signal.
func TestNotScanned(t *testing.T) {
	tests := []struct {
		name string
		in   Input
	}{
		{"fenced code", userInput("Here is the file:\n```go\n// always use testify\n// I prefer globals\n```\nWhat does it do?")},
		{"tilde fence", userInput("~~~\nnever use mocks\n~~~")},
		{"inline code", userInput("The `// I prefer tabs` comment is wrong?")},
		{"block quote", userInput("> I prefer tabs\n> never use mocks\nWhere is this from?")},
		{"question", userInput("Should we always use testify?")},
		{"question without mark", userInput("do you always use testify")},
		{"assistant", Input{Blocks: []Block{
			{Role: "user", Kind: "text", Text: "add a test"},
			{Role: "assistant", Kind: "text", Text: "I prefer table-driven tests, so I'll use them. Never use testify."},
		}}},
		{"tool result", Input{Blocks: []Block{
			{Role: "user", Kind: "text", Text: "read the style guide"},
			{Role: "assistant", Kind: "tool_use", Tool: "Read", Text: "STYLE.md"},
			{Role: "user", Kind: "tool_result", Text: "Always use tabs. Never use mocks. We use zap for logging."},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := extractSignals(t, tt.in); len(got) != 0 {
				t.Errorf("Extract(%s).Signals=%v, want none", tt.name, got)
			}
		})
	}
}

// TestAssistantDecision: the assistant's "I'll use X" is a decision only
// when the user agreed in the same turn.
func TestAssistantDecision(t *testing.T) {
	reply := "I'll use Postgres for the event store, then add the migration."
	tests := []struct {
		user string
		want []string
	}{
		{"yes, sounds good", []string{"decision:postgres>event store:+"}},
		{"go ahead", []string{"decision:postgres>event store:+"}},
		{"add an event store", []string{}},
		{"should we use Postgres?", []string{}},
	}
	for _, tt := range tests {
		in := Input{Blocks: []Block{
			{Role: "user", Kind: "text", Text: tt.user},
			{Role: "assistant", Kind: "text", Text: reply},
		}}
		if got := extractSignals(t, in); !slices.Equal(got, tt.want) {
			t.Errorf("Extract(%q + assistant %q).Signals=%v, want %v", tt.user, reply, got, tt.want)
		}
	}
}

// TestGlobal checks the scope rule of signals.
func TestGlobal(t *testing.T) {
	tests := []struct {
		text   string
		global bool
	}{
		{"I prefer tabs", true},
		{"I always use ruff for linting", true},
		{"In general, avoid ORMs", true},
		{"I prefer tabs in this repo", false},
		{"In this project we always use make for builds", false},
		{"never use testify", true},
		{"never use testify in this repo", false},
		{"use pnpm here, never npm", false},
		{"We're a pnpm shop", false},
		{"we use zap for logging", false},
		{"this service should never log tokens", false},
		{"I prefer table-driven tests and never testify", true},
	}
	for _, tt := range tests {
		d, err := NewLocal().Extract(context.Background(), userInput(tt.text))
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Signals) == 0 {
			t.Errorf("Extract(%q).Signals=[], want some", tt.text)
			continue
		}
		for _, s := range d.Signals {
			if s.Global != tt.global {
				t.Errorf("Extract(%q).Signals=%v, want Global=%v", tt.text, sigs(d.Signals), tt.global)
				break
			}
		}
	}
}

// TestNormSubject pins the normalisation rules.
func TestNormSubject(t *testing.T) {
	tests := []struct{ in, want string }{
		{"table-driven tests", "table-driven test"},
		{"Table Driven Tests", "table-driven test"},
		{"the `testify` package", "testify package"},
		{"my dependencies", "dependency"},
		{"Postgres", "postgres"},
		{"Redis", "redis"},
		{"classes", "class"},
		{"branches", "branch"},
		{"caches", "cache"},
		{"golang", "go"},
		{"pre-commit hooks", "pre commit hook"},
		{"type-safe APIs", "type-safe api"},
		{"tabs please", "tab"},
		{"pnpm in all my projects", "pnpm"},
		{"mocks for now", "mock"},
		{"terraform btw", "terraform"},
		{"redis anyway", "redis"},
		{"using early returns whenever possible", "early return"},
		{"very long subject with many words that goes on and on", "very long subject"},
		{"run tests in the container before pushing to main", "test"},
		{"it", ""},
		{"that", ""},
		{"how you did it", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := normSubject(tt.in); got != tt.want {
			t.Errorf("normSubject(%q)=%q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSignalText keeps the sentence, trimmed and bounded.
func TestSignalText(t *testing.T) {
	text := "Some context first.  I prefer   table-driven tests!  And more."
	d, _ := NewLocal().Extract(context.Background(), userInput(text))
	if len(d.Signals) != 1 || d.Signals[0].Text != "I prefer table-driven tests!" {
		t.Fatalf("Extract(%q).Signals=%+v, want one with Text %q", text, d.Signals, "I prefer table-driven tests!")
	}
	long := "I prefer " + strings.Repeat("very ", 100) + "long things"
	d, _ = NewLocal().Extract(context.Background(), userInput(long))
	for _, s := range d.Signals {
		if n := len([]rune(s.Text)); n > maxSignalText {
			t.Errorf("Signal.Text has %d runes, want ≤ %d", n, maxSignalText)
		}
	}
}

// TestSignalsBounded: a long message gives at most maxSignals signals.
func TestSignalsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "Never use tool%d. ", i)
	}
	d, _ := NewLocal().Extract(context.Background(), userInput(b.String()))
	if len(d.Signals) != maxSignals {
		t.Errorf("len(Signals)=%d, want %d", len(d.Signals), maxSignals)
	}
}

// TestRequestsNotStated: a bare request ("air themed names please") is a
// preference of the clustering path (three mentions), not a rule stated
// once; the same words as a rule are stated.
func TestRequestsNotStated(t *testing.T) {
	for _, tc := range []struct {
		text   string
		stated bool
	}{
		{"Nature themed usernames please", false},
		{"table-driven tests please", false},
		{"I prefer table-driven tests.", true},
		{"Always use table-driven tests please.", true},
	} {
		d, err := NewLocal().Extract(context.Background(), userInput(tc.text))
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Signals) != 1 || d.Signals[0].Kind != episode.SignalPreference {
			t.Errorf("%q: signals %v, want one preference", tc.text, sigs(d.Signals))
			continue
		}
		if d.Signals[0].Stated != tc.stated {
			t.Errorf("%q: Stated = %v, want %v", tc.text, d.Signals[0].Stated, tc.stated)
		}
	}
}
