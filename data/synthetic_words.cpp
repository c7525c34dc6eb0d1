#include "data/synthetic_words.hpp"

#include <array>

namespace gaugelab::data::synthetic_words {

namespace {
using SV = std::string_view;

constexpr std::array kNames{SV("Alice"), SV("Bob"),   SV("Carol"), SV("David"), SV("Emma"),  SV("Frank"),
                            SV("Grace"), SV("Henry"), SV("Jack"),  SV("Kate"),  SV("Laura"), SV("Mark"),
                            SV("Nina"),  SV("Oscar"), SV("Paul"),  SV("Rose"),  SV("Sam"),   SV("Tom"),
                            SV("Anna"),  SV("Ben"),   SV("Clara"), SV("Dan"),   SV("Eve"),   SV("George"),
                            SV("Helen"), SV("Leo"),   SV("Mary"),  SV("Nick"),  SV("Peter"), SV("Sarah"),
                            SV("Tim"),   SV("Lucy"),  SV("Max"),   SV("Julia"), SV("Victor"), SV("Olivia")};

constexpr std::array kColours{SV("red"),   SV("green"),  SV("blue"),   SV("yellow"), SV("black"), SV("white"),
                              SV("brown"), SV("pink"),   SV("purple"), SV("orange"), SV("gray"),  SV("silver"),
                              SV("golden")};

constexpr std::array kObjects{SV("box"),  SV("cup"),  SV("hat"),  SV("ball"), SV("book"), SV("key"),  SV("coat"),
                              SV("bag"),  SV("lamp"), SV("chair"), SV("pen"), SV("ring"), SV("kite"), SV("bell"),
                              SV("shoe"), SV("clock"), SV("bike"), SV("boat"), SV("car"), SV("map"),  SV("coin"),
                              SV("vase"), SV("scarf"), SV("drum"), SV("flag"), SV("jar"), SV("rope"), SV("sock")};

constexpr std::array kListWords{
    SV("apple"),   SV("river"),  SV("stone"),   SV("cloud"),   SV("garden"), SV("window"),  SV("mountain"),
    SV("pencil"),  SV("ocean"),  SV("forest"),  SV("candle"),  SV("bridge"), SV("mirror"),  SV("letter"),
    SV("ticket"),  SV("basket"), SV("rabbit"),  SV("tiger"),   SV("horse"),  SV("salt"),    SV("sugar"),
    SV("bread"),   SV("cheese"), SV("honey"),   SV("winter"),  SV("summer"), SV("morning"), SV("evening"),
    SV("paper"),   SV("glass"),  SV("metal"),   SV("wood"),    SV("music"),  SV("dance"),   SV("story"),
    SV("dream"),   SV("voice"),  SV("light"),   SV("shadow"),  SV("fire"),   SV("water"),   SV("earth"),
    SV("wind"),    SV("island"), SV("village"), SV("castle"),  SV("tower"),  SV("market"),  SV("valley"),
    SV("desert"),  SV("lemon"),  SV("orange"),  SV("coffee"),  SV("butter"), SV("flower"),  SV("tree"),
    SV("leaf"),    SV("seed"),   SV("snow"),    SV("rain"),    SV("storm"),  SV("star"),    SV("moon"),
    SV("sun"),     SV("road"),   SV("train"),   SV("plane"),   SV("ship"),   SV("door"),    SV("wall"),
    SV("floor"),   SV("table"),  SV("bottle"),  SV("plate"),   SV("spoon"),  SV("knife"),   SV("fork"),
    SV("shirt"),   SV("dress"),  SV("button"),  SV("thread"),  SV("needle"), SV("hammer"),  SV("nail"),
    SV("ladder"),  SV("bucket"), SV("blanket"), SV("pillow"),  SV("doctor"), SV("farmer"),  SV("king"),
    SV("queen"),   SV("soldier"), SV("sailor"), SV("painter"), SV("singer"), SV("child"),   SV("friend"),
    SV("father"),  SV("mother"), SV("brother"), SV("sister"),  SV("house"),  SV("school"),  SV("church"),
    SV("station"), SV("library"), SV("kitchen"), SV("office"), SV("street"), SV("city"),    SV("country")};

constexpr std::array kFillers{
    SV("The sun was low over the hills."),      SV("Nobody said a word for a while."),
    SV("It had rained all morning."),           SV("The room was quiet and warm."),
    SV("A dog barked somewhere down the road."), SV("They sat by the window and waited."),
    SV("The train was late again."),            SV("Later that day the wind picked up."),
    SV("Everyone was tired after the walk."),   SV("The market was busy as usual."),
    SV("Someone knocked at the door."),         SV("The clock on the wall ticked slowly.")};

constexpr std::array kAgreementNouns{
    NounForms{"dog", "dogs"},         NounForms{"cat", "cats"},         NounForms{"child", "children"},
    NounForms{"man", "men"},          NounForms{"woman", "women"},      NounForms{"teacher", "teachers"},
    NounForms{"farmer", "farmers"},   NounForms{"bird", "birds"},       NounForms{"key", "keys"},
    NounForms{"box", "boxes"},        NounForms{"student", "students"}, NounForms{"doctor", "doctors"},
    NounForms{"king", "kings"},       NounForms{"girl", "girls"},       NounForms{"boy", "boys"},
    NounForms{"horse", "horses"},     NounForms{"book", "books"},       NounForms{"car", "cars"},
    NounForms{"painting", "paintings"}, NounForms{"letter", "letters"}, NounForms{"friend", "friends"},
    NounForms{"singer", "singers"}};

constexpr std::array kPastVerbs{SV("saw"),      SV("liked"),   SV("found"),   SV("helped"),    SV("painted"),
                                SV("followed"), SV("visited"), SV("watched"), SV("called"),    SV("remembered")};

constexpr std::array kPlaces{SV("house"),   SV("river"),  SV("bridge"), SV("market"), SV("school"),
                             SV("garden"),  SV("station"), SV("church"), SV("forest"), SV("harbor")};

constexpr std::array kPrepositions{SV("beside"), SV("behind"), SV("near"), SV("under")};

constexpr std::array kAdjectives{SV("hungry"), SV("tired"), SV("happy"), SV("old"),    SV("broken"), SV("heavy"),
                                 SV("quiet"),  SV("lost"),  SV("ready"), SV("famous"), SV("small"),  SV("clean")};

constexpr std::array kNumberWords{SV("one"), SV("two"),   SV("three"), SV("four"), SV("five"),
                                  SV("six"), SV("seven"), SV("eight"), SV("nine")};
}  // namespace

std::span<const std::string_view> names() { return kNames; }
std::span<const std::string_view> colours() { return kColours; }
std::span<const std::string_view> objects() { return kObjects; }
std::span<const std::string_view> list_words() { return kListWords; }
std::span<const std::string_view> fillers() { return kFillers; }
std::span<const NounForms> agreement_nouns() { return kAgreementNouns; }
std::span<const std::string_view> past_verbs() { return kPastVerbs; }
std::span<const std::string_view> places() { return kPlaces; }
std::span<const std::string_view> prepositions() { return kPrepositions; }
std::span<const std::string_view> adjectives() { return kAdjectives; }
std::span<const std::string_view> number_words() { return kNumberWords; }

}  // namespace gaugelab::data::synthetic_words
